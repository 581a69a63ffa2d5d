/**
 * Realised fan-out: for every gold query, the shards holding a triple used by a solution of its
 * gold answer (section 4.2 of the FKGQA paper), computed by `fkgqa stats` with provenance queries
 * (src/report/provenance.ts) and stored in the state folder (`<state>/realised-fan-out/<kg>.json`,
 * src/build/state.ts). `readRealisedFanOut` is the one reader (stats, questions, score and eval's
 * oracle agent use it); results of another build (another output digest) are never used.
 */
import path from 'node:path';
import { readJsonIfExists } from './open.js';
import { stateDir, STATE_FILES } from './state.js';

/** How the realised fan-out of one query ended: `ok`, or why it is unknown. */
export type RealisedStatus = 'ok' | 'timeout' | 'error' | 'unparsable';

/** The realised fan-out of one graph's queries as stored (`<state>/realised-fan-out/<kg>.json`). */
export interface StoredRealisedFanOut {
  graph: string;
  /** Output digest of the build it was computed for (build.json). */
  buildDigest: string;
  /** Time limit of each provenance query, in ms. */
  timeoutMs: number;
  /** Per query id: the shard names (`shard<N>`) whose triples a solution uses. */
  realised: { query: string; status: RealisedStatus; shards: string[] }[];
}

/**
 * The realised fan-out `fkgqa stats` stored for one graph of this build: `<state>/realised-fan-out/<kg>.json`;
 * it counts only when its `buildDigest` is the build's output digest (and, when asked, its time limit is `timeoutMs`).
 * @returns the stored document, or undefined when none matches
 */
export function readRealisedFanOut(build: string, graph: string, digest: string, lookup: { state?: string; timeoutMs?: number } = {}): StoredRealisedFanOut | undefined {
  const d = readJsonIfExists<StoredRealisedFanOut>(path.join(stateDir(build, lookup.state), STATE_FILES.realisedFanOut(graph)));
  return d?.buildDigest === digest && Array.isArray(d.realised) && (lookup.timeoutMs === undefined || d.timeoutMs === lookup.timeoutMs) ? d : undefined;
}

/**
 * The shards each gold query's answer needs, per query id, for one graph (from `readRealisedFanOut`):
 * null for a query whose provenance did not finish; undefined when nothing is stored for this build.
 * @param digest the build's output digest (build.json)
 * @param state the `--state` folder, if not `<shards>.state/`
 */
export function readNeededShards(shards: string, kg: string, digest: string, state?: string): Map<string, string[] | null> | undefined {
  const doc = readRealisedFanOut(shards, kg, digest, { state });
  return doc ? new Map(doc.realised.map((r) => [r.query, r.status === 'ok' ? r.shards : null])) : undefined;
}
