// npm run bench:retrieval [-- --shards DIR] [-- --scope graph|federation] [-- --k 1,2,5,10,60] [-- --out FILE.json] [-- --graphs a,b] [-- --no-stem]
// Retrieval figures of the KGVoyager search tools (a benchmark, not a test). For every distinct
// gold query of the build's benchmark.json, the targets are the classes (objects of rdf:type
// patterns) and properties (predicates other than rdf:type) it uses; each of its questions is
// searched (1) as a whole and (2) word by word (content words, stop words removed; a target's rank
// is its best rank over the words). Reported: recall@1/5/10 and MRR of BM25 only, dense only and
// hybrid (RRF), per graph and overall, the time per search, and for hybrid per RRF constant k the
// hits kept by the adaptive filter and the recall within them.
// The index is built by the tools' own code (KgVoyager.classIndex/propertyIndex: one SPARQL index
// query per shard) from the shard files loaded into in-process oxigraph stores: with --scope graph
// (default) one index per graph, its questions searched in it; with --scope federation one index
// over every shard of every graph, as `fkgqa mcp` serves a whole build (the agent does not know
// the graph), every question searched in it.
// Without --shards the Spider4SPARQL dev set is built first.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseQuery } from '../dist/sparql/parse.js';
import { triplePatterns } from '../dist/analyze/patterns.js';
import { OxigraphClient } from '../dist/describe/client.js';
import { rrf, adaptiveFilter, RETRIEVAL_DEFAULTS } from '../dist/mcp/kgvoyager/retrieval.js';
import { contentWords } from '../dist/mcp/kgvoyager/text.js';
import { KgVoyager } from '../dist/mcp/kgvoyager/tools.js';
import { benchOptions, here } from './lib.js';

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const options = benchOptions({ shards: '', k: '1,2,5,10,60', out: '', graphs: '', scope: 'graph' }, ['no-stem']);
const scope = options.scope;
if (scope !== 'graph' && scope !== 'federation') {
  console.error(`bench:retrieval: --scope must be graph or federation, not ${scope}`);
  process.exit(2);
}
const ks = options.k.split(',').map(Number);
let shards = options.shards || undefined;
if (!shards) {
  if (!fs.existsSync(path.join(options.source, 'dev.json'))) {
    console.error(`bench:retrieval: no --shards and no corpus at ${options.source}`);
    process.exit(2);
  }
  shards = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-retrieval-')), 'shards');
  process.stderr.write(`building the dev set into ${shards}\n`);
  execFileSync(process.execPath, [path.resolve(here, '../bin/fkgqa.js'), 'partition', '--source', options.source, '--out', shards, '--quiet'], { stdio: 'ignore' });
}
const benchmark = JSON.parse(fs.readFileSync(path.join(shards, 'benchmark.json'), 'utf8'));
const prefix = benchmark.defaultPrefix;

// Distinct gold queries per graph, with all their questions and their targets.
const byQuery = new Map();
for (const e of benchmark.entries) {
  const key = `${e.kg}\n${e.query}`;
  let q = byQuery.get(key);
  if (!q) {
    const parsed = parseQuery(e.query, prefix);
    if (!parsed.ok) {
      process.stderr.write(`skipped (does not parse): ${e.queryId}: ${parsed.error}\n`);
      continue;
    }
    const classes = new Set();
    const properties = new Set();
    for (const tp of triplePatterns(parsed.query.ast)) {
      const p = tp.predicate;
      if (p?.termType === 'NamedNode' && p.value === RDF_TYPE) {
        if (tp.object.termType === 'NamedNode') classes.add(tp.object.value);
      } else if (p?.termType === 'NamedNode') properties.add(p.value);
      for (const iri of tp.pathIris ?? []) if (iri !== RDF_TYPE) properties.add(iri);
    }
    byQuery.set(key, (q = { kg: e.kg, id: e.queryId, questions: [], targets: { classes: [...classes], properties: [...properties] } }));
  }
  q.questions.push(e.question);
}
const graphFilter = options.graphs ? new Set(options.graphs.split(',')) : null;
const graphs = [...new Set([...byQuery.values()].map((q) => q.kg))].filter((g) => !graphFilter || graphFilter.has(g)).sort();

const METHODS = ['bm25', 'dense', 'hybrid'];
const KINDS = ['classes', 'properties'];
const MODES = ['question', 'words'];
const CUTS = [1, 5, 10];
/** Accumulates per-query means, then means over queries. */
const newAcc = () => ({ queries: 0, r: Object.fromEntries(CUTS.map((c) => [c, 0])), mrr: 0, ms: 0, searches: 0 });
const results = {}; // results[scope][kind][mode][method] = acc; scope = graph name or 'overall'
const sweep = {}; // sweep[kind][k] = {queries, kept, keptRecall, r5}
const acc = (scope, kind, mode, method) => ((((results[scope] ??= {})[kind] ??= {})[mode] ??= {})[method] ??= newAcc());
let absent = { classes: 0, properties: 0 };
let targetsTotal = { classes: 0, properties: 0 };

const rankOf = (ids, target) => {
  const i = ids.indexOf(target);
  return i < 0 ? Infinity : i + 1;
};

/** The registry of some graphs' shards; queries load the shard file into an oxigraph store, answer, and free it. */
function shardRegistry(names) {
  const endpoints = names.flatMap((graph) =>
    JSON.parse(fs.readFileSync(path.join(shards, graph, 'manifest.json'), 'utf8')).shards.map((s) => ({
      id: s.endpoint,
      url: `oxigraph:${path.join(shards, graph, s.file)}`,
      graph,
      shard: s.name,
      description: null,
      voidFile: path.join(shards, graph, `${s.name}_void.ttl`),
      voidExtendedFile: null,
    })),
  );
  const select = async (url, query) => {
    const file = url.slice('oxigraph:'.length);
    // The store holds the shard in a named graph: query it as the default graph.
    const client = OxigraphClient.load([{ file, graph: 'urn:fkgqa:bench:shard' }]);
    try {
      return await client.select(query.replace(/WHERE \{/, 'FROM <urn:fkgqa:bench:shard> WHERE {'));
    } finally {
      client.close();
    }
  };
  return { registry: { source: 'bench', build: shards, endpoints }, select };
}

async function buildIndexes(names, label) {
  const { registry, select } = shardRegistry(names);
  const kgv = new KgVoyager({ registry, select, options: { stem: !options['no-stem'] } });
  const t0 = performance.now();
  const indexes = { classes: await kgv.classIndex(), properties: await kgv.propertyIndex() };
  process.stderr.write(
    `${label}: ${registry.endpoints.length} shards, ${indexes.classes.index.entries.length} classes, ${indexes.properties.index.entries.length} properties indexed in ${(performance.now() - t0).toFixed(0)} ms\n`,
  );
  return indexes;
}

const federationIndexes = scope === 'federation' ? await buildIndexes(graphs, 'federation') : null;
for (const graph of graphs) {
  const indexes = federationIndexes ?? (await buildIndexes([graph], graph));

  for (const q of [...byQuery.values()].filter((x) => x.kg === graph)) {
    for (const kind of KINDS) {
      const { search, byIri } = indexes[kind];
      const targets = q.targets[kind].filter((t) => byIri.has(t));
      targetsTotal[kind] += q.targets[kind].length;
      absent[kind] += q.targets[kind].length - targets.length;
      if (targets.length === 0) continue;
      for (const mode of MODES) {
        const per = Object.fromEntries(METHODS.map((m) => [m, { r: Object.fromEntries(CUTS.map((c) => [c, 0])), rr: 0, n: 0, ms: 0, searches: 0 }]));
        const perK = Object.fromEntries(ks.map((k) => [k, { kept: 0, keptHit: 0, r5: 0, n: 0, searches: 0 }]));
        for (const question of q.questions) {
          const texts = mode === 'question' ? [question] : contentWords(question);
          if (texts.length === 0) continue;
          const best = Object.fromEntries(METHODS.map((m) => [m, new Map(targets.map((t) => [t, Infinity]))]));
          const bestK = Object.fromEntries(ks.map((k) => [k, { rank: new Map(targets.map((t) => [t, Infinity])), kept: new Set() }]));
          for (const text of texts) {
            for (const method of METHODS) {
              const t1 = performance.now();
              const r = await search.search(text, { mode: method, rrfK: RETRIEVAL_DEFAULTS.rrfK });
              per[method].ms += performance.now() - t1;
              per[method].searches++;
              const ids = r.ranked.map((h) => h.id);
              for (const t of targets) best[method].set(t, Math.min(best[method].get(t), rankOf(ids, t)));
            }
            const lists = [search.bm25(text).map((h) => h.id), (await search.dense(text)).map((h) => h.id)];
            for (const k of ks) {
              const fused = rrf(lists, k);
              const kept = adaptiveFilter(fused, RETRIEVAL_DEFAULTS.delta, RETRIEVAL_DEFAULTS.minKeep);
              perK[k].kept += kept.length;
              perK[k].searches++;
              const ids = fused.map((h) => h.id);
              for (const t of targets) bestK[k].rank.set(t, Math.min(bestK[k].rank.get(t), rankOf(ids, t)));
              for (const h of kept) bestK[k].kept.add(h.id);
            }
          }
          for (const method of METHODS)
            for (const t of targets) {
              const rank = best[method].get(t);
              for (const c of CUTS) per[method].r[c] += rank <= c ? 1 : 0;
              per[method].rr += rank === Infinity ? 0 : 1 / rank;
              per[method].n++;
            }
          for (const k of ks)
            for (const t of targets) {
              perK[k].keptHit += bestK[k].kept.has(t) ? 1 : 0;
              perK[k].r5 += bestK[k].rank.get(t) <= 5 ? 1 : 0;
              perK[k].n++;
            }
        }
        for (const method of METHODS) {
          const p = per[method];
          if (p.n === 0) continue;
          for (const scope of [graph, 'overall']) {
            const a = acc(scope, kind, mode, method);
            a.queries++;
            for (const c of CUTS) a.r[c] += p.r[c] / p.n;
            a.mrr += p.rr / p.n;
            a.ms += p.ms;
            a.searches += p.searches;
          }
        }
        if (mode === 'question' || mode === 'words') {
          for (const k of ks) {
            const p = perK[k];
            if (p.n === 0) continue;
            const s = (((sweep[kind] ??= {})[mode] ??= {})[k] ??= { queries: 0, kept: 0, keptRecall: 0, r5: 0 });
            s.queries++;
            s.kept += p.kept / p.searches;
            s.keptRecall += p.keptHit / p.n;
            s.r5 += p.r5 / p.n;
          }
        }
      }
    }
  }
}

const pct = (x) => (100 * x).toFixed(1);
const summary = (a) => ({ queries: a.queries, r1: a.r[1] / a.queries, r5: a.r[5] / a.queries, r10: a.r[10] / a.queries, mrr: a.mrr / a.queries, msPerSearch: a.ms / a.searches });
const out = {
  shards,
  scope,
  stem: !options['no-stem'],
  graphs: graphs.length,
  distinctQueries: [...byQuery.values()].filter((q) => graphs.includes(q.kg)).length,
  rrfK: RETRIEVAL_DEFAULTS.rrfK,
  targets: targetsTotal,
  targetsNotInIndex: absent,
  results: {},
  sweep: {},
};
for (const [scope, kinds] of Object.entries(results))
  for (const [kind, modes] of Object.entries(kinds))
    for (const [mode, methods] of Object.entries(modes)) for (const [method, a] of Object.entries(methods)) (((out.results[scope] ??= {})[kind] ??= {})[mode] ??= {})[method] = summary(a);
for (const [kind, modes] of Object.entries(sweep))
  for (const [mode, byK] of Object.entries(modes))
    for (const [k, s] of Object.entries(byK))
      ((out.sweep[kind] ??= {})[mode] ??= {})[k] = { queries: s.queries, keptPerSearch: s.kept / s.queries, keptRecall: s.keptRecall / s.queries, r5: s.r5 / s.queries };

console.log(
  `Retrieval of the KGVoyager search tools: ${out.distinctQueries} distinct gold queries over ${graphs.length} graphs (${shards}); index per ${scope === 'graph' ? 'graph' : 'federation (all graphs)'}; BM25 ${out.stem ? 'with' : 'without'} S-stemmer; hybrid RRF k = ${out.rrfK}, filter δ = ${RETRIEVAL_DEFAULTS.delta}, top ${RETRIEVAL_DEFAULTS.minKeep} kept`,
);
console.log(`targets: ${targetsTotal.classes} class and ${targetsTotal.properties} property uses; not in the index (never retrievable, left out): ${absent.classes} and ${absent.properties}\n`);
console.log('| kind | search by | method | R@1 | R@5 | R@10 | MRR | ms/search |');
console.log('|---|---|---|---:|---:|---:|---:|---:|');
for (const kind of KINDS)
  for (const mode of MODES)
    for (const method of METHODS) {
      const s = out.results.overall?.[kind]?.[mode]?.[method];
      if (s)
        console.log(
          `| ${kind} | ${mode === 'question' ? 'question' : 'each content word (best rank)'} | ${method} | ${pct(s.r1)} | ${pct(s.r5)} | ${pct(s.r10)} | ${s.mrr.toFixed(3)} | ${s.msPerSearch.toFixed(2)} |`,
        );
    }
console.log('\nPer graph, searching with the question: MRR of bm25 / dense / hybrid');
console.log('| graph | queries | classes | properties |');
console.log('|---|---:|---|---|');
for (const g of graphs) {
  const r = out.results[g];
  if (!r) continue;
  const f = (kind) => METHODS.map((m) => r[kind]?.question?.[m]?.mrr?.toFixed(3) ?? '–').join(' / ');
  console.log(`| ${g} | ${r.classes?.question?.hybrid?.queries ?? r.properties?.question?.hybrid?.queries ?? 0} | ${f('classes')} | ${f('properties')} |`);
}
console.log('\nRRF constant k: hits kept by the adaptive filter per search, and the share of targets among them (recall of what the agent sees), searching with the question');
console.log('| k | classes kept | classes recall in kept | classes R@5 | properties kept | properties recall in kept | properties R@5 |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const k of ks) {
  const c = out.sweep.classes?.question?.[k];
  const p = out.sweep.properties?.question?.[k];
  console.log(`| ${k} | ${c?.keptPerSearch.toFixed(1)} | ${pct(c?.keptRecall ?? 0)} | ${pct(c?.r5 ?? 0)} | ${p?.keptPerSearch.toFixed(1)} | ${pct(p?.keptRecall ?? 0)} | ${pct(p?.r5 ?? 0)} |`);
}
console.log('\nThe same, searching word by word (kept = mean per word search; recall in kept = target kept for at least one word)');
console.log('| k | classes kept | classes recall in kept | properties kept | properties recall in kept |');
console.log('|---:|---:|---:|---:|---:|');
for (const k of ks) {
  const c = out.sweep.classes?.words?.[k];
  const p = out.sweep.properties?.words?.[k];
  console.log(`| ${k} | ${c?.keptPerSearch.toFixed(1)} | ${pct(c?.keptRecall ?? 0)} | ${p?.keptPerSearch.toFixed(1)} | ${pct(p?.keptRecall ?? 0)} |`);
}
if (options.out) {
  fs.writeFileSync(options.out, JSON.stringify(out, null, 2) + '\n');
  process.stderr.write(`written ${options.out}\n`);
}
