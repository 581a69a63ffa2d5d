import type { QueryAnalysis } from '../analyze/analyze.js';
import type { PatternMatcher } from '../analyze/match.js';
import { patternKey } from '../analyze/patterns.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { FingerprintSet } from '../common/fingerprints.js';
import { getHasher, SetChecksum, sha256OfFile } from '../common/hash.js';
import type { ShardingRule } from '../plan/rules.js';
import type { MaterializeResult } from './write.js';

/** Guarantee 1: the shards of a graph together hold exactly the input triples. */
export interface CompletenessCheck {
  ok: boolean;
  /** Triples as read from the input (duplicates included) and their multiset checksum. */
  inputLines: number;
  inputChecksum: string;
  /** The same, computed from the shard files read back from disk, before duplicates are removed. */
  shardLines: number;
  shardChecksum: string;
}

/** A shard file after verification and duplicate removal. */
export interface ShardFile {
  file: string;
  /** Distinct triples. */
  triples: number;
  /** Repeated lines removed from the file. */
  duplicates: number;
  bytes: number;
  /** sha256 of the final file (hex). */
  sha256: string;
  /** SetChecksum digest of the distinct lines. */
  checksum: string;
}

/** Calls `onLine` for every non-empty line of a text file, streaming. */
async function forEachLine(file: string, onLine: (line: string) => void, onChunk?: (chunk: Buffer) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    onChunk?.(chunk as Buffer);
    const text = rest + decoder.write(chunk as Buffer);
    const lines = text.split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l.length) onLine(l);
  }
  rest += decoder.end();
  if (rest.length) onLine(rest);
}

/**
 * Reads the written shard files back from disk and checks guarantee 1: together they hold exactly
 * the lines the assignment pass read from the input (count and multiset checksum: the sum mod 2^64
 * of xxh64 over the N-Triples lines). Then removes repeated lines within each shard (a graph is a
 * set; a repeated input triple always lands in the same shard), rewriting only files that have
 * any, and gives each final file's distinct triples, size, sha256 and checksum.
 */
export async function verifyShards(files: string[], input: { lines: number; checksum: string }): Promise<{ check: CompletenessCheck; shards: ShardFile[] }> {
  const hasher = await getHasher();
  const all = new SetChecksum(hasher);
  const shards: ShardFile[] = [];
  for (const file of files) {
    const seen = new FingerprintSet();
    const distinct = new SetChecksum(hasher);
    const sha = crypto.createHash('sha256');
    let bytes = 0;
    let duplicates = 0;
    await forEachLine(
      file,
      (line) => {
        const h = hasher.h64(line);
        all.addHash(h);
        if (seen.add(Number(h >> 32n), Number(h & 0xffffffffn))) distinct.addHash(h);
        else duplicates++;
      },
      (chunk) => {
        sha.update(chunk);
        bytes += chunk.length;
      },
    );
    let digest = sha.digest('hex');
    if (duplicates > 0) {
      const kept = new FingerprintSet();
      const tmp = `${file}.dedup`;
      const fd = fs.openSync(tmp, 'w');
      let buffer: string[] = [];
      await forEachLine(file, (line) => {
        const h = hasher.h64(line);
        if (kept.add(Number(h >> 32n), Number(h & 0xffffffffn))) buffer.push(line, '\n');
        if (buffer.length > 8192) {
          fs.writeSync(fd, buffer.join(''));
          buffer = [];
        }
      });
      fs.writeSync(fd, buffer.join(''));
      fs.closeSync(fd);
      fs.renameSync(tmp, file);
      digest = sha256OfFile(file);
      bytes = fs.statSync(file).size;
    }
    shards.push({ file, triples: distinct.count, duplicates, bytes, sha256: digest, checksum: distinct.digest });
  }
  return {
    check: {
      ok: all.count === input.lines && all.digest === input.checksum,
      inputLines: input.lines,
      inputChecksum: input.checksum,
      shardLines: all.count,
      shardChecksum: all.digest,
    },
    shards,
  };
}

/** Guarantee 2 for one covered query: the implied fan-out f(Q) and, if below 2, why. */
export interface FederationCheck {
  query: string;
  /** f(Q) = |∪_t E_t| (section 4.2 of the FKGQA paper), over slots. */
  fanOut: number;
  /**
   * Σ_t |E_t|: triple-pattern-wise sources (TPWSS, as LargeRDFBench and FedShop report it), the
   * number of (pattern, shard) pairs a source selection has to consider.
   */
  tpwss: number;
  /** The slots in ∪_t E_t, ascending. */
  slots: number[];
  /**
   * A triple pattern every solution must match (`QueryAnalysis.required`) matches no triple of the
   * graph: the answer is necessarily empty on any sharding, so the query is not federated whatever f(Q).
   */
  necessarilyEmpty: boolean;
  /** f(Q) ≥ 2 and not necessarily empty. */
  ok: boolean;
  reason?: string;
}

/**
 * Computes f(Q) of every covered query from the slots each pattern matched during materialisation
 * and checks f(Q) ≥ 2 (guarantee 2). A query with a required triple pattern that matches nothing
 * is classed "answer necessarily empty" and not federated, whatever its f(Q).
 */
export function checkFederation(analyses: QueryAnalysis[], covered: Set<string>, matcher: PatternMatcher, result: MaterializeResult, slotName: (slot: number) => string): FederationCheck[] {
  const out: FederationCheck[] = [];
  for (const a of analyses) {
    if (!covered.has(a.id)) continue;
    const union = new Set<number>();
    const unmatched: string[] = [];
    let tpwss = 0;
    for (const tp of a.patterns) {
      const e = result.patternSlots[matcher.indexOf.get(patternKey(tp))!];
      tpwss += e.size;
      if (e.size === 0) unmatched.push(patternKey(tp));
      for (const s of e) union.add(s);
    }
    const slots = [...union].sort((x, y) => x - y);
    const emptyRequired = a.required.filter((k) => unmatched.includes(k));
    const necessarilyEmpty = emptyRequired.length > 0;
    const check: FederationCheck = { query: a.id, fanOut: slots.length, tpwss, slots, necessarilyEmpty, ok: slots.length >= 2 && !necessarilyEmpty };
    if (necessarilyEmpty) {
      check.reason =
        `answer necessarily empty${a.implicitGroup ? ' (one row over no solutions: an aggregate without GROUP BY)' : ''}: ` +
        `no triple of the graph matches the required triple pattern${emptyRequired.length > 1 ? 's' : ''} ${emptyRequired.join(' ; ')}`;
    } else if (!check.ok) {
      check.reason =
        slots.length === 0
          ? `no triple pattern has a match in the data (${unmatched.length} patterns)`
          : `every matching triple is in ${slotName(slots[0])}` + (unmatched.length ? `; no match at all for ${unmatched.join(' ; ')}` : '');
    }
    out.push(check);
  }
  return out;
}

/** Whether a chosen rule's split is visible in the materialised data. */
export interface RuleCheck {
  rule: string;
  ok: boolean;
  /** What was seen: the slots of each element. */
  detail: string;
}

/**
 * Checks that every chosen rule is realised: a predicate rule's two predicates share no shard, a
 * class rule's two classes share no shard (their instances' placement, predicate shards aside), a
 * horizontal rule's class spans at least two shards.
 */
export function checkRules(rules: ShardingRule[], result: MaterializeResult, slotName: (slot: number) => string): RuleCheck[] {
  const names = (s: Set<number> | undefined) =>
    [...(s ?? [])]
      .sort((a, b) => a - b)
      .map(slotName)
      .join(', ') || 'none';
  return rules.map((r) => {
    if (r.kind === 'horizontal') {
      const s = result.classSlots.get(r.elements[0]);
      return { rule: r.key, ok: (s?.size ?? 0) >= 2, detail: `instances in ${names(s)}` };
    }
    const m = r.kind === 'predicate' ? result.predicateSlots : result.classSlots;
    const [a, b] = r.elements.map((e) => m.get(e));
    const shared = [...(a ?? [])].filter((x) => b?.has(x));
    return {
      rule: r.key,
      ok: shared.length === 0 && (a?.size ?? 0) > 0 && (b?.size ?? 0) > 0,
      detail: `first in ${names(a)}; second in ${names(b)}`,
    };
  });
}
