// npm run bench:mcp-walk [-- --shards DIR] [-- --kg GRAPH] [-- --questions N] [-- --setups a,b] [-- --out FILE] [-- --compare CHECKOUT]
// What an agent reads per setup: the characters of a fixed walk over N questions (default 10)
// through `fkgqa mcp` over stdio, in each setup (baseline, high_level, void_tool, kgvoyager).
// A benchmark, not a test: it prints one line per setup and writes every text counted to --out.
//
// The walk is deterministic: the questions are the first N distinct gold queries of --kg (benchmark
// order), and the agent's calls are fixed per setup, ending with the oracle's query (the gold query
// over exactly the shards its answer needs, as `fkgqa eval --agent oracle` sends it):
//   baseline:   run_sparql_query `SELECT ?s ?p ?o WHERE { SERVICE <first needed endpoint> { ?s ?p ?o } } LIMIT 20`
//               (what is there), then run_sparql_query with the oracle's query;
//   high_level: run_sparql_query with the oracle's query (the descriptions stand for the exploration);
//   void_tool:  get_void_descriptions of the endpoints the oracle's query names, then run_sparql_query;
//   kgvoyager:  search_all_classes and search_all_properties with the gold query's first class and
//               first property (their IRI's last words), then execute_query with the oracle's query.
// Counted per question, as the model reads them: the system prompt `fkgqa eval` gives the setup
// (endpoints filled in; eval's own words on submit_final_query and cancel included when the prompt
// does not hold them), the question, the tools as eval offers them to the model (the server's, in
// the OpenAI `tools` form: name, description, parameters; the harness's two tools), and every tool
// answer's text. Prompt and tools are counted once per question (a model API is sent them on every
// turn; one turn per call would multiply them by the calls).
//
// --compare CHECKOUT walks the same questions with another checkout's `fkgqa mcp` and prompts (its
// bin/fkgqa.js and dist, e.g. main built in a copy) first, and prints both with the ratio per setup.
//
// Without --shards the real corpus's graph --kg (default concert_singer) is partitioned into a
// temporary folder with its gold answers (`fkgqa stats`: the oracle needs the shards each answer
// needs); without the corpus, the demo build (graph library). `fkgqa serve` is started on it and
// stopped at the end.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { McpToolProvider, HARNESS_TOOLS } from '../dist/eval/tools.js';
import { pathToFileURL } from 'node:url';
import { negatedShards, scriptedQuery } from '../dist/eval/agents.js';
import { readNeededShards } from '../dist/build/fan-out.js';
import { parseQuery } from '../dist/sparql/parse.js';
import { benchOptions, here, loadAverage, writeResult } from './lib.js';

const cli = path.resolve(here, '../bin/fkgqa.js');
const o = benchOptions({ shards: '', kg: '', questions: '10', setups: 'baseline,high_level,void_tool,kgvoyager', out: '', compare: '' });
const loadBefore = loadAverage();
const node = (args, opts = {}) => execFileSync(process.execPath, [cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'], ...opts });

let shards = o.shards;
const haveCorpus = fs.existsSync(path.join(o.source, 'dev.json'));
const kg = o.kg || (shards ? '' : haveCorpus ? 'concert_singer' : 'library');
if (!shards) {
  shards = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-walk-')), 'shards');
  node(['partition', ...(haveCorpus ? ['--source', o.source, '--kg', kg] : []), '--out', shards, '--quiet']);
  node(['stats', '--shards', shards, '--kg', kg, '--quiet']);
}
const bench = JSON.parse(fs.readFileSync(path.join(shards, 'benchmark.json'), 'utf8'));
const build = JSON.parse(fs.readFileSync(path.join(shards, 'build.json'), 'utf8'));
const graph = kg || bench.entries[0].kg;
const seen = new Set();
const questions = bench.entries.filter((e) => e.kg === graph && !seen.has(e.queryId) && seen.add(e.queryId)).slice(0, Number(o.questions));
const needed = readNeededShards(shards, graph, build.outputDigest);
if (!needed) throw new Error(`no realised fan-out of ${graph}: run fkgqa stats --shards ${shards} --kg ${graph}`);

/** Starts `fkgqa serve` on the build's graph; resolves with its endpoints file once written. */
function startServe() {
  const state = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-walk-state-'));
  const child = spawn(process.execPath, [cli, 'serve', '--shards', shards, '--state', state, '--kg', graph, '--port', '0', '-q'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const file = path.join(state, 'endpoints.json');
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`fkgqa serve exited with ${code}`)));
    readline.createInterface({ input: child.stdout }).on('line', () => {
      if (fs.existsSync(file)) resolve({ child, file, state });
    });
  });
}

/** The system prompt `fkgqa eval` of a checkout gives a run (its own function when the checkout has one). */
function systemPrompt(evalModule, setup, endpoints) {
  const prompt = evalModule.readPrompt(setup);
  const catalogue = JSON.parse(fs.readFileSync(path.join(shards, 'catalogue.json'), 'utf8'));
  const descriptions = setup === 'high_level' ? new Map(catalogue.shards.map((s) => [s.endpoint, s.description])) : undefined;
  if (evalModule.systemPrompt) return evalModule.systemPrompt(prompt.text, endpoints, descriptions, 10);
  return prompt.text.replace('{{endpoints}}', endpoints.map((e) => (descriptions ? `- ${e.url} — ${descriptions.get(e.id) ?? '(no description)'}` : `- ${e.url}`)).join('\n'));
}

/** The last words of an IRI's local part (`…/singer#song_name` → `song name`). */
const words = (iri) =>
  iri
    .replace(/^.*[/#]/, '')
    .replace(/[_-]+/g, ' ')
    .trim();

/** The first class (object of rdf:type) and first other property of the gold query's triple patterns. */
function firstClassAndProperty(goldText) {
  const parsed = parseQuery(goldText, bench.defaultPrefix);
  const triples = [];
  const walk = (x) => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (!x || typeof x !== 'object') return;
    if (x.type === 'bgp') triples.push(...x.triples);
    for (const v of Object.values(x)) if (v && typeof v === 'object') walk(v);
  };
  walk(parsed.query.ast.where);
  const type = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
  const cls = triples.find((t) => t.predicate.value === type && t.object.termType === 'NamedNode')?.object.value;
  const prop = triples.find((t) => t.predicate.termType === 'NamedNode' && t.predicate.value !== type)?.predicate.value;
  return { cls, prop };
}

const serve = await startServe();
const endpointsDoc = JSON.parse(fs.readFileSync(serve.file, 'utf8'));
const endpoints = (endpointsDoc.endpoints ?? endpointsDoc).filter((e) => (e.graph ?? e.kg) === graph).map((e) => ({ id: e.id ?? e.name, url: e.url, shard: e.shard }));
const texts = [];

/**
 * The walk of every setup with a checkout's `fkgqa mcp` and prompts.
 * @returns one row per setup: calls, errors, characters of prompt + tools and of the tool answers
 */
async function walkWith(checkout, label) {
  const bin = path.join(checkout, 'bin/fkgqa.js');
  const evalModule = await import(pathToFileURL(path.join(checkout, 'dist/eval/eval.js')).href);
  const rows = [];
  for (const setup of o.setups.split(',')) {
    const tools = await McpToolProvider.spawn([process.execPath, bin, 'mcp', '--endpoints', serve.file, '--kg', graph, '--setup', setup, '--quiet']);
    const offered = [...tools.tools(), ...HARNESS_TOOLS].map((t) => ({ type: 'function', function: t }));
    const toolsChars = JSON.stringify(offered).length;
    const system = systemPrompt(evalModule, setup, endpoints);
    let promptChars = 0;
    let resultChars = 0;
    let calls = 0;
    let errors = 0;
    try {
      for (const q of questions) {
        const n = needed.get(q.queryId) ?? null;
        const negated = await negatedShards(q.query, bench.defaultPrefix, endpoints);
        const oracle = scriptedQuery('oracle', q.query, bench.defaultPrefix, endpoints, n, negated);
        const targets = [...new Set([...oracle.matchAll(/SERVICE\s+<([^>]+)>/g)].map((m) => m[1]))];
        const walk = [];
        if (setup === 'baseline') walk.push(['run_sparql_query', { query: `SELECT ?s ?p ?o WHERE { SERVICE <${targets[0]}> { ?s ?p ?o } } LIMIT 20` }]);
        if (setup === 'void_tool') walk.push(['get_void_descriptions', { endpoints: targets }]);
        if (setup === 'kgvoyager') {
          const { cls, prop } = firstClassAndProperty(q.query);
          if (cls) walk.push(['search_all_classes', { term: words(cls) }]);
          if (prop) walk.push(['search_all_properties', { term: words(prop) }]);
        }
        walk.push([setup === 'kgvoyager' ? 'execute_query' : 'run_sparql_query', { query: oracle }]);
        promptChars += system.length + q.question.length + toolsChars;
        texts.push({ checkout: label, setup, question: q.queryId, what: 'system prompt', chars: system.length, text: system });
        for (const [name, args] of walk) {
          const r = await tools.call(name, args);
          calls++;
          if (r.isError) errors++;
          resultChars += r.text.length;
          texts.push({ checkout: label, setup, question: q.queryId, what: name, args, chars: r.text.length, isError: r.isError, text: r.text });
        }
      }
    } finally {
      await tools.close();
    }
    rows.push({ setup, questions: questions.length, calls, errors, promptAndTools: promptChars, results: resultChars, total: promptChars + resultChars, toolsChars });
  }
  return rows;
}

let rows;
let before;
try {
  if (o.compare) before = await walkWith(path.resolve(o.compare), 'compare');
  rows = await walkWith(path.resolve(here, '..'), 'this');
} finally {
  serve.child.kill('SIGTERM');
}
const pad = (s, n) => String(s).padStart(n);
process.stdout.write(`characters an agent reads in a walk of ${questions.length} questions of ${graph} (${path.resolve(shards)}), per setup\n`);
process.stdout.write(`${'setup'.padEnd(12)} ${pad('calls', 6)} ${pad('errors', 6)} ${pad('prompt+tools', 13)} ${pad('tool answers', 13)} ${pad('total', 9)}   (tools list alone)\n`);
for (const r of rows) process.stdout.write(`${r.setup.padEnd(12)} ${pad(r.calls, 6)} ${pad(r.errors, 6)} ${pad(r.promptAndTools, 13)} ${pad(r.results, 13)} ${pad(r.total, 9)}   (${r.toolsChars})\n`);
if (before) {
  process.stdout.write(`\nthis checkout against --compare ${path.resolve(o.compare)} (after / before)\n`);
  process.stdout.write(`${'setup'.padEnd(12)} ${pad('tool answers', 22)} ${pad('ratio', 6)} ${pad('total', 22)} ${pad('ratio', 6)}\n`);
  for (const r of rows) {
    const b = before.find((x) => x.setup === r.setup);
    process.stdout.write(
      `${r.setup.padEnd(12)} ${pad(`${b.results} → ${r.results}`, 22)} ${pad((r.results / b.results).toFixed(2), 6)} ${pad(`${b.total} → ${r.total}`, 22)} ${pad((r.total / b.total).toFixed(2), 6)}\n`,
    );
  }
}
process.stdout.write(`load: ${loadBefore.join(' ')} before, ${loadAverage().join(' ')} after\n`);
if (o.out) fs.writeFileSync(o.out, JSON.stringify({ graph, shards: path.resolve(shards), questions: questions.map((q) => q.queryId), rows, before, texts }, null, 2) + '\n');
writeResult(o, 'mcp-walk', {
  ratios: before
    ? rows.map((r) => ({
        what: `${r.setup}: tool answer characters, this checkout / --compare`,
        value: Math.round((100 * r.results) / before.find((b) => b.setup === r.setup).results) / 100,
        goal: 0.5,
      }))
    : [],
  figures: Object.fromEntries(rows.map((r) => [r.setup, { toolAnswers: r.results, total: r.total, ...(before ? { before: before.find((b) => b.setup === r.setup) } : {}) }])),
  loadBefore,
});
