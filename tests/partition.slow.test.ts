/**
 * Partition over the real corpus (Spider4SPARQL dev set, 20 graphs): one whole build checked for
 * its counts, coverage, federation guarantees, summary, VoID and recorded output digest
 * (tests/helpers.ts DEV_OUTPUT_DIGEST), then built again: byte-identical. The demo dataset's
 * cases, checked by hand, are in partition.test.ts (`npm test`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PARTITION_OPTIONS, partition } from '../src/partition/index.js';
import { formatPartitionSummary, summarizePartition } from '../src/report/partition-summary.js';
import { DEV_OUTPUT_DIGEST, HAS_SPIDER, SPIDER, tmpDir } from './helpers.js';
import { itChecksDevVoid } from './void-facts.js';

describe.skipIf(!HAS_SPIDER)('partition / Spider4SPARQL dev set', async () => {
  const out = path.join(tmpDir(), 'shards');
  const result = HAS_SPIDER ? await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out }) : undefined;
  const s = result ? summarizePartition(result) : undefined;

  it('builds all 20 graphs, losing and doubling nothing', () => {
    expect(result!.graphs.length).toBe(20);
    expect(s!.guarantees.completeness).toEqual({ ok: 20, graphs: 20 });
    const triples = result!.graphs.reduce((n, g) => n + g.manifest.shards.reduce((m, x) => m + x.triples, 0), 0);
    expect(triples).toBe(210_557); // the corpus README's total
  });

  it('covers every query that can be split, and says why the other five cannot', () => {
    expect(s!.coverage.covered).toBe(539);
    expect(s!.coverage.uncoverable.map((u) => u.id)).toEqual(['car_1/q47', 'cre_Doc_Template_Mgt/q26', 'cre_Doc_Template_Mgt/q27', 'cre_Doc_Template_Mgt/q28', 'wta_1/q26']);
  });

  it('federates every covered query except 29 whose answer is necessarily empty (a required triple pattern matches nothing)', () => {
    const f = s!.guarantees.federation;
    expect([f.federated, f.necessarilyEmpty, f.covered]).toEqual([510, 29, 539]);
    // Every exception is of that class (network_1/q13 with f(Q) = 1 among them): such a query is covered, not federated.
    expect(f.exceptions.filter((e) => !e.reason.startsWith('answer necessarily empty'))).toEqual([]);
    const q13 = f.exceptions.find((e) => e.query === 'network_1/q13')!;
    expect(q13.reason).toBe(
      'answer necessarily empty: no triple of the graph matches the required triple patterns ' +
        '?t1 <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://valuenet/ontop/high_schooler> ; ?t1 <http://valuenet/ontop/high_schooler#name> ?t1_name ; ?t1 <http://valuenet/ontop/high_schooler#id> ?t1_id',
    );
    // An aggregate without GROUP BY answers one row over no solutions (COUNT 0): said so.
    expect(f.exceptions.find((e) => e.query === 'flight_2/q15')!.reason).toContain('answer necessarily empty (one row over no solutions: an aggregate without GROUP BY)');
    const network = result!.graphs.find((g) => g.manifest.graph === 'network_1')!.manifest;
    expect(network.queries.find((q) => q.id === 'network_1/q13')).toMatchObject({ status: 'covered', necessarilyEmpty: true, fanOut: 1 });
    // benchmark.json does not call such questions federated.
    const bench = JSON.parse(fs.readFileSync(path.join(out, 'benchmark.json'), 'utf8')) as { entries: { queryId: string; federated: boolean }[] };
    expect(bench.entries.filter((e) => e.queryId === 'flight_2/q21').map((e) => e.federated)).toEqual([false, false, false, false]);
    expect(s!.guarantees.rules.realised).toBe(s!.guarantees.rules.total);
  });

  it('keeps the default build byte-identical (output digest 93f7f94c9e811cd0 since the VoID states class partitions only where a shard holds their type triples)', () => {
    const r = result!;
    expect(r.outputDigest.slice(0, 16)).toBe('93f7f94c9e811cd0');
    expect(summarizePartition(r).impliedFanOut).toEqual({ mean: 2.88, median: 2, min: 1, max: 6 });
  });

  it('proves every rule set and layout optimal', () => {
    expect(s!.solver.optimal).toBe(40);
  });

  it('prints a short summary: not coverable and necessarily empty queries counted per graph, the full list in the manifests or with --verbose; the paper column explained', () => {
    const text = formatPartitionSummary(s!, { out });
    expect(text).not.toContain('exception ');
    expect(text).not.toContain('not coverable: car_1/q47');
    expect(text).toContain('  not coverable: 5, per graph: car_1 1, cre_Doc_Template_Mgt 3, wta_1 1\n');
    expect(text).toContain('     necessarily empty, per graph: cre_Doc_Template_Mgt 3, flight_2 19, network_1 1, real_estate_properties 1, student_transcripts_tracking 1, voter_1 1, wta_1 3\n');
    expect(text).toContain(`(each query's reason: ${out}/<kg>/manifest.json, queries[].reason of those with status "uncoverable" or necessarilyEmpty true; --verbose prints them here)`);
    expect(text).toContain(
      '  paper: the figures the FKGQA paper reports for its own build (section 4.2): 118 shards over the 19 Spider4SPARQL\n  graphs it kept. This build has 20 graphs: compare the per-graph figures, not the totals.\n',
    );
    // The manifests hold every reason the summary counts.
    const reasons = result!.graphs.flatMap((g) => g.manifest.queries.filter((q) => q.status === 'uncoverable' || q.necessarilyEmpty).map((q) => q.id));
    expect(reasons).toHaveLength(34);
    // --verbose: one line per query, with its reason (the 34 of the manifests).
    const verbose = formatPartitionSummary(s!, { verbose: true, out });
    expect(verbose.split('\n').filter((l) => /^\s+(exception|not coverable:) [\w-]+\/q\d+: /.test(l))).toHaveLength(34);
    expect(verbose).toContain('     exception flight_2/q15: answer necessarily empty (one row over no solutions: an aggregate without GROUP BY)');
    expect(text.split('\n').length).toBeLessThan(verbose.split('\n').length - 30);
  });

  itChecksDevVoid(() => ({ out, result: result! }));

  it('gives the recorded output digest (every shard, manifest and VoID file byte for byte: the same on every machine and run)', () => {
    expect(result!.outputDigest).toBe(DEV_OUTPUT_DIGEST);
  });

  it('rebuilds byte-identically', async () => {
    const again = await partition({ ...DEFAULT_PARTITION_OPTIONS, source: SPIDER, out: path.join(tmpDir(), 'shards') });
    expect(again.outputDigest).toBe(result!.outputDigest);
    // A second whole build: 1 min on a quiet machine, over 2.5 min at load 20–30.
  }, 1_800_000);
});
