/**
 * The scripted agents' check (tests/eval.slow.test.ts, on every distinct gold query of the demo
 * graph library, or on the gold queries given): the oracle, trivial and single agents run
 * in-process on the served demo build, then `score` reads their runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { runEval } from '../src/eval/eval.js';
import { score } from '../src/score/score.js';

/**
 * Runs the three scripted agents on the questions of graph library asking `queries` (gold query
 * ids; all of the graph's when absent), one question per gold query, and checks the score report:
 * oracle all correct with every needed shard and no trivial federation, trivial all correct with
 * all shards, single (one endpoint) fewer correct than the oracle.
 * @param o.timeoutMs the time limit of each tool call and final query (ms)
 */
export async function scriptedAgentsCheck(o: { build: string; endpointsFile: string; out: string; queries?: string[]; timeoutMs: number }): Promise<void> {
  for (const agent of ['oracle', 'trivial', 'single'] as const) {
    await runEval({
      shards: o.build,
      endpoints: o.endpointsFile,
      setup: 'baseline',
      agent,
      out: o.out,
      kgs: ['library'],
      ...(o.queries ? { queries: o.queries } : {}),
      distinctQueries: true,
      tools: 'in-process',
      timeoutMs: o.timeoutMs,
      probe: agent === 'oracle',
    });
  }
  const report = await score({ runs: [o.out], shards: o.build });
  const by = Object.fromEntries(report.groups.map((g) => [g.agent, g]));
  const entries = (JSON.parse(fs.readFileSync(path.join(o.build, 'benchmark.json'), 'utf8')) as { entries: { kg: string; queryId: string }[] }).entries;
  const distinct = new Set(entries.filter((e) => e.kg === 'library' && (!o.queries || o.queries.includes(e.queryId))).map((e) => e.queryId)).size;
  expect(distinct).toBe(o.queries?.length ?? distinct);
  expect(by.oracle.runs).toBe(distinct);
  expect(by.oracle.accuracy.count).toBe(by.oracle.accuracyExecutableGold.of);
  expect(by.oracle.consultation.submitted.percent).toBe(100);
  expect(by.oracle.trivial.submitted.count).toBe(0);
  expect(by.trivial.accuracy.count).toBe(by.trivial.accuracyExecutableGold.of);
  expect(by.trivial.trivial.submitted.percent).toBe(100);
  expect(by.trivial.allShards.percent).toBe(100);
  // One endpoint alone misses answers: every gold query of the demo needs two shards or more.
  expect(by.single.accuracy.count).toBeLessThan(by.oracle.accuracy.count);
  expect(by.oracle.validity.valid.percent).toBe(100);
  expect(by.trivial.validity.queries).toBe(0); // no probe: submitted at once
}
