/**
 * `<out>/benchmark.json`: every question with its gold query, the shard endpoints of its graph and
 * the shards that may match it.
 */
import path from 'node:path';
import { writeJson } from '../common/output.js';
import { TOOL } from '../common/version.js';
import type { GoldQuery, Question } from '../load/questions.js';
import { withPrefixDeclared } from '../sparql/parse.js';
import type { GraphBuild } from './manifest.js';

/**
 * One question of `<out>/benchmark.json`. Shard lists name endpoints (`<kg>-shard<N>`, the names
 * `fkgqa serve` and the SPARQL-MCP server use), in shard order.
 */
export interface BenchmarkEntry {
  /** Index of the question in the questions file (0-based). */
  index: number;
  kg: string;
  question: string;
  /** The gold query, with `PREFIX :` declared (runs on any SPARQL 1.1 engine). */
  query: string;
  /** `<kg>/q<N>`: one id per distinct query of a graph. */
  queryId: string;
  /** Whether the chosen sharding rules cover the query (section 4.1), or why not. */
  status: 'covered' | 'uncoverable' | 'unparsable';
  /** Covered and implied fan-out f(Q) ≥ 2. */
  federated: boolean;
  /** Every shard endpoint of the entry's graph: the endpoints an agent is given, NOT the shards the query needs. */
  endpoints: string[];
  /** Shards holding a triple that matches at least one triple pattern of the query (implied fan-out, computed by partition); null if the query does not parse. */
  shardsImplied: string[] | null;
}

/** What each field of a benchmark entry means (written into benchmark.json as `fields`). */
export const BENCHMARK_FIELDS: Record<keyof BenchmarkEntry, string> = {
  index: 'index of the question in the questions file (0-based)',
  kg: 'knowledge graph of the question',
  question: 'the natural-language question',
  query: 'the gold SPARQL query, with its default prefix declared',
  queryId: 'id of the distinct gold query, <kg>/q<N>',
  status: 'covered (the sharding rules split it), uncoverable (no rule can) or unparsable',
  federated: 'covered, its implied fan-out is at least 2 shards, and its answer is not necessarily empty (a required triple pattern matches nothing)',
  endpoints: "every shard endpoint of the question's graph (what an agent is given), not only the ones the query needs",
  shardsImplied:
    'shard endpoints holding a triple that matches some triple pattern of the query (implied fan-out); the shards whose triples the gold answer actually uses (realised) come from fkgqa questions or fkgqa stats',
};

/** Writes `<dir>/benchmark.json` (deterministic: questions in file order). */
export function writeBenchmark(dir: string, questions: Question[], queries: GoldQuery[], graphs: GraphBuild[], defaultPrefix: string, questionsFile: string, questionsSha: string): void {
  const byGraph = new Map(graphs.map((g) => [g.manifest.graph, g.manifest]));
  const graphOf = new Map(graphs.map((g) => [g.manifest.graph, g]));
  const queryOf = new Map<number, GoldQuery>();
  for (const q of queries) for (const i of q.questions) queryOf.set(i, q);
  const entries = questions
    .filter((q) => byGraph.has(q.kg))
    .map((q) => {
      const m = byGraph.get(q.kg)!;
      const gq = queryOf.get(q.index)!;
      const mq = m.queries.find((x) => x.id === gq.id)!;
      const implied = graphOf.get(q.kg)!.impliedShards.get(gq.id);
      const entry: BenchmarkEntry = {
        index: q.index,
        kg: q.kg,
        question: q.question,
        query: withPrefixDeclared(q.query, defaultPrefix),
        queryId: gq.id,
        status: mq.status,
        federated: mq.status === 'covered' && (mq.fanOut ?? 0) >= 2 && !mq.necessarilyEmpty,
        endpoints: m.shards.map((s) => s.endpoint),
        shardsImplied: implied ? implied.map((name) => `${q.kg}-${name}`) : null,
      };
      return entry;
    });
  writeJson(path.join(dir, 'benchmark.json'), {
    tool: TOOL,
    questions: { file: path.basename(questionsFile), sha256: questionsSha },
    defaultPrefix,
    fields: BENCHMARK_FIELDS,
    count: entries.length,
    entries,
  });
}
