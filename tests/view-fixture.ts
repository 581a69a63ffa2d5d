/**
 * The runs the viewer's tests read: runs of the oracle on the demo build's graph library (real eval
 * runs through the federation engine), plus runs made wrong from them the ways agents go wrong: a
 * row lost, a value changed, an extra column, rows out of order, nothing submitted, the final query
 * failed. Used by tests/view.test.ts and tests/view.slow.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { runEval } from '../src/eval/eval.js';
import type { RunRecord } from '../src/eval/record.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild } from './helpers.js';

/** What viewFixture made: the build (with gold answers), its running endpoints, and the two run files. */
export interface ViewFixture {
  build: string;
  server: ShardServer;
  /** fkgqa-run/2 records of the oracle on library (8 runs), one per line. */
  oracleFile: string;
  /** The six wrong runs (agents lost-row, changed-value, reversed, extra-column, cancelled, failed). */
  wrongFile: string;
  oracle: RunRecord[];
}

const lit = (v: string) => ({ type: 'literal' as const, value: v });
const rows = (r: RunRecord) => r.final!.results!.results!.bindings;

/**
 * Makes the fixture in `dir` (a copy of the shared demo build, its endpoints served in this process;
 * the caller closes `server`).
 * @returns the build, server and run files
 */
export async function viewFixture(dir: string): Promise<ViewFixture> {
  const build = await demoBuild(dir, { gold: true });
  const server = await serve({ shards: build, writeFiles: false });
  const endpoints = path.join(dir, 'endpoints.json');
  fs.writeFileSync(endpoints, JSON.stringify(server.endpointsFile()));
  const oracleFile = path.join(dir, 'oracle.jsonl');
  await runEval({ shards: build, endpoints, setup: 'baseline', agent: 'oracle', out: oracleFile, tools: 'in-process', timeoutMs: 20_000, probe: true, kgs: ['library'] });
  const oracle = fs
    .readFileSync(oracleFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RunRecord);
  const byQuery = (q: string) => structuredClone(oracle.find((r) => r.question.queryId === q)!);
  const wrong: RunRecord[] = [];
  const as = (r: RunRecord, agent: string) => ({ ...r, agent, id: r.id.replace('|oracle|', `|${agent}|`) });
  // library/q2 (names of authors from Peru, 2 rows): one lost.
  const lost = as(byQuery('library/q2'), 'lost-row');
  rows(lost).splice(1, 1);
  wrong.push(lost);
  // library/q3 (ordered, newest first): one title changed, and separately the order reversed.
  const changed = as(byQuery('library/q3'), 'changed-value');
  rows(changed)[0] = { ...rows(changed)[0], t1_title: lit('Not A Title') };
  wrong.push(changed);
  const reversed = as(byQuery('library/q3'), 'reversed');
  rows(reversed).reverse();
  wrong.push(reversed);
  // library/q5: an extra column.
  const wide = as(byQuery('library/q5'), 'extra-column');
  wide.final!.results!.head.vars = [...wide.final!.results!.head.vars!, 'x'];
  for (const b of rows(wide)) b.x = lit('1');
  wrong.push(wide);
  // Nothing submitted, and a final query that failed.
  const cancelled = as(byQuery('library/q1'), 'cancelled');
  Object.assign(cancelled, { endReason: 'cancelled', cancelReason: 'not answerable', finalQuery: null, final: undefined });
  wrong.push(cancelled);
  const failed = as(byQuery('library/q4'), 'failed');
  failed.final = { status: 'timeout', ms: 30_000, endpoints: failed.final!.endpoints, error: 'no answer within 30000 ms' };
  wrong.push(failed);
  const wrongFile = path.join(dir, 'wrong.jsonl');
  fs.writeFileSync(wrongFile, wrong.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return { build, server, oracleFile, wrongFile, oracle };
}
