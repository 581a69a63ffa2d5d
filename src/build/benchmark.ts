/**
 * The gold queries of a build, from its `benchmark.json` (written by `fkgqa partition`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { readJsonFile, readJsonIfExists } from './open.js';

interface BenchmarkFileQueries {
  defaultPrefix: string;
  entries: { kg: string; query: string; queryId: string }[];
}

/** A distinct gold query of the build. */
export interface BuildGoldQuery {
  id: string;
  graph: string;
  text: string;
  questions: number;
}

/**
 * The distinct gold queries of a build, from `benchmark.json`, in id order within each graph.
 * @throws InputError when the file is missing
 */
export function readGoldQueries(shards: string): { defaultPrefix: string; queries: BuildGoldQuery[] } {
  const file = path.join(shards, 'benchmark.json');
  if (!fs.existsSync(file)) throw new InputError('benchmark.json not found: not a fkgqa partition build', { file });
  const b = readJsonFile<BenchmarkFileQueries>(file, 'benchmark.json of an fkgqa build');
  const byId = new Map<string, BuildGoldQuery>();
  for (const e of b.entries) {
    const q = byId.get(e.queryId);
    if (q) q.questions++;
    else byId.set(e.queryId, { id: e.queryId, graph: e.kg, text: e.query, questions: 1 });
  }
  const num = (id: string) => Number(/q(\d+)$/.exec(id)?.[1] ?? 0);
  const queries = [...byId.values()].sort((a, b) => (a.graph < b.graph ? -1 : a.graph > b.graph ? 1 : num(a.id) - num(b.id)));
  return { defaultPrefix: b.defaultPrefix, queries };
}

/**
 * The build's default prefix (`defaultPrefix` of benchmark.json) as the prefixes suggested for a
 * query that uses `:` undeclared: `{ '': <IRI> }`, or `{}` without a build or a readable file.
 */
export function buildPrefixes(shards: string | null | undefined): Record<string, string> {
  const b = shards ? readJsonIfExists<{ defaultPrefix?: unknown }>(path.join(shards, 'benchmark.json')) : undefined;
  return typeof b?.defaultPrefix === 'string' && b.defaultPrefix ? { '': b.defaultPrefix } : {};
}
