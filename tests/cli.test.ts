// @module-tag split-tiers (tests/tiers.ts: the tests tagged slow run in npm run test:slow)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyDir, DEMO, demoBuild, fileHashes, fkgqaInProcess, ROOT, tmpDir } from './helpers.js';

/** Runs the built CLI in the test process (tests/helpers.ts): the child's exit code, stdout and stderr, without its start. */
const fkgqa = (...args: string[]) => fkgqaInProcess(args);

function replaceLine(file: string, n: number, text: string) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[n - 1] = text;
  fs.writeFileSync(file, lines.join('\n'));
}

/** Lists the entries of a directory, for "nothing left behind" checks. */
const entries = (dir: string) => (fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []);

describe('cli / partition', () => {
  it('builds the demo, prints the summary on stdout and progress on stderr', async () => {
    const out = path.join(tmpDir(), 'shards');
    const r = await fkgqa('partition', '--out', out);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fkgqa partition: 2 graphs, 16 questions, 14 distinct queries/);
    expect(r.stdout).toContain('1. nothing lost, nothing doubled: 2/2 graphs');
    expect(r.stderr).toContain('[1/2] library:');
    expect(entries(out)).toEqual(['benchmark.json', 'build.json', 'catalogue.json', 'catalogue.ttl', 'library', 'observatory']);
    expect(entries(path.join(out, 'library')).filter((f) => f.endsWith('.ttl'))).toEqual([1, 2, 3, 4].flatMap((n) => [`shard${n}_void.ttl`, `shard${n}_void_extended.ttl`]));
    expect(r.stderr).toMatch(/library: VoID of 4 shards, \d+ linksets/);
    expect(r.stdout).toMatch(/Shards, their VoID \(16 files, \d+ linksets\) and the catalogue written to /);
  });

  it('writes no VoID and no catalogue with --no-void; fkgqa describe adds them to the build later, --json prints only the summary', async () => {
    const out = path.join(tmpDir(), 'shards');
    expect((await fkgqa('partition', '--out', out, '--no-void', '-q')).code).toBe(0);
    expect(entries(out)).toEqual(['benchmark.json', 'build.json', 'library', 'observatory']);
    expect(entries(path.join(out, 'library')).some((f) => f.endsWith('.ttl'))).toBe(false);
    const r = await fkgqa('describe', '--shards', out, '--endpoint-base', 'http://localhost:7001');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fkgqa describe: 2 graphs, 8 shards, \d+ linksets; 16 VoID files/);
    expect(r.stderr).toContain('[1/2] library: 4 shards described');
    expect(entries(out)).toContain('catalogue.json');
    const cat = JSON.parse(fs.readFileSync(path.join(out, 'catalogue.json'), 'utf8'));
    expect(cat.shards[0].url).toBe('http://localhost:7001/library-shard1/sparql');
    expect(fs.readFileSync(path.join(out, 'library/shard1_void.ttl'), 'utf8')).toContain('void:sparqlEndpoint <http://localhost:7001/library-shard1/sparql>');
    const j = await fkgqa('describe', '--shards', out, '--json', '-q');
    expect(j.code).toBe(0);
    expect(j.stderr).toBe('');
    expect(JSON.parse(j.stdout)).toMatchObject({ graphs: 2, shards: 8, files: 18 });
  });

  it('stops quietly with exit code 141 when the reader of its stdout has gone (fkgqa --help | head)', async () => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy(); // the read end closes before the child writes anything
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(code).toBe(141);
    expect(stderr).toBe('');
  });

  it('explains every option in --help', async () => {
    const r = await fkgqa('partition', '--help');
    for (const o of ['--source', '--out', '--questions', '--kg', '--buckets', '--seed', '--default-prefix', '--solver-timeout', '--no-void', '--endpoint-base', '--json', '--quiet']) {
      expect(r.stdout).toContain(o);
    }
    const d = await fkgqa('describe', '--help');
    for (const o of ['--shards', '--endpoint-base', '--sparql', '--json', '--quiet']) expect(d.stdout).toContain(o);
  });
});

describe('cli / bad input gets a clear error and loses nothing', () => {
  it('names the file and line of a malformed N-Triples line, exits 2, and keeps the previous build', async () => {
    const src = copyDir(DEMO);
    const parent = tmpDir();
    const out = await demoBuild(parent);
    const before = fs.readFileSync(path.join(out, 'build.json'), 'utf8');
    replaceLine(path.join(src, 'kg/library.nt'), 5, '<http://valuenet/ontop/author/author_id=2> <http://valuenet/ontop/author#name> "unterminated .');
    const r = await fkgqa('partition', '--source', src, '--out', out, '-q');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^fkgqa: error: .*kg\/library\.nt, line 5: /);
    expect(fs.readFileSync(path.join(out, 'build.json'), 'utf8')).toBe(before);
    expect(entries(parent)).toEqual(['shards']); // no staging directory left behind
  });

  it('names the file and line of a Turtle syntax error', async () => {
    const src = copyDir(DEMO);
    replaceLine(path.join(src, 'kg/observatory.ttl'), 9, '  <telescope#name> "Kepler" ;;; ]');
    const out = path.join(tmpDir(), 'shards');
    const r = await fkgqa('partition', '--source', src, '--out', out);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/kg\/observatory\.ttl, line 9: /);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('names the question and the graph when a question names a graph with no data file', async () => {
    const src = copyDir(DEMO);
    const dev = JSON.parse(fs.readFileSync(path.join(src, 'dev.json'), 'utf8'));
    dev.push({ kg_name: 'atlas', question: 'Where?', query: 'select ?x where { ?x a :place }' });
    fs.writeFileSync(path.join(src, 'dev.json'), JSON.stringify(dev));
    const r = await fkgqa('partition', '--source', src, '--out', path.join(tmpDir(), 'shards'));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('dev.json: question 16 names graph "atlas", which has no data file');
    expect(r.stderr).toContain(path.join('kg', 'atlas.nt'));
  });

  it('warns about a missing ontology and builds with explicit types only', async () => {
    const src = copyDir(DEMO);
    fs.rmSync(path.join(src, 'ontologies/library.owl'));
    const out = path.join(tmpDir(), 'shards');
    // The graph without its ontology only (--kg library): the other graph shows nothing here.
    const r = await fkgqa('partition', '--source', src, '--out', out, '--kg', 'library');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: library: no ontology in ontologies/library.(owl|rdf|xml|ttl)');
    const m = JSON.parse(fs.readFileSync(path.join(out, 'library/manifest.json'), 'utf8'));
    expect(m.inputs.ontology).toBeNull();
    expect(m.warnings[0]).toMatch(/explicit rdf:type patterns only/);
  });

  it('reports a query that does not parse with its text and message, and builds the rest', async () => {
    const src = copyDir(DEMO);
    const dev = JSON.parse(fs.readFileSync(path.join(src, 'dev.json'), 'utf8'));
    dev[0].query = 'select ?x where { ?x a :author ';
    fs.writeFileSync(path.join(src, 'dev.json'), JSON.stringify(dev));
    // The graph of that query only (--kg library): the other graph shows nothing here.
    const r = await fkgqa('partition', '--source', src, '--out', path.join(tmpDir(), 'shards'), '--kg', 'library');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('1 unparsable');
    expect(r.stdout).toMatch(/unparsable: library\/q1: Parse error on line 1/);
    expect(r.stderr).toContain('does not parse');
    expect(r.stderr).toContain('select ?x where { ?x a :author ');
  });

  it('describe: refuses a shard file changed after the build, exits 2, and writes nothing', async () => {
    // A copy of the shared demo build (tests/global-setup.ts); describe would rewrite its VoID files and catalogue.
    const parent = tmpDir();
    const out = await demoBuild(parent);
    replaceLine(path.join(out, 'observatory/shard2.nt'), 3, '<http://x> <http://y> "broken .');
    const before = fileHashes(parent);
    const r = await fkgqa('describe', '--shards', out);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^fkgqa: error: .*observatory\/shard2\.nt: shard file differs from the one the build wrote/m);
    // Nothing written, changed or left behind (no staging file, no state folder).
    expect(fileHashes(parent)).toEqual(before);
    const n = await fkgqa('describe', '--shards', path.join(out, 'nowhere'));
    expect(n.code).toBe(2);
    expect(n.stderr).toContain('nowhere: no such build directory');
    const e = await fkgqa('describe', '--shards', out, '--endpoint-base', 'ftp://x');
    expect(e.code).toBe(2);
    expect(e.stderr).toContain('--endpoint-base must be an http(s) URL');
  });

  it('rejects bad options and bad question files with a message', async () => {
    const b = await fkgqa('partition', '--buckets', '1', '--out', path.join(tmpDir(), 's'));
    expect(b.code).not.toBe(0);
    expect(b.stderr).toContain('--buckets must be an integer from 2 to 1024');
    const src = copyDir(DEMO);
    fs.rmSync(path.join(src, 'dev.json'));
    fs.writeFileSync(path.join(src, 'questions.csv'), 'kg,question,query\nlibrary,How many?,select * where {?s ?p ?o}\n');
    const c = await fkgqa('partition', '--source', src, '--out', path.join(tmpDir(), 's'));
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('questions.csv: CSV header lacks the column "kg_name"');
    fs.writeFileSync(path.join(src, 'questions.csv'), '');
    fs.writeFileSync(path.join(src, 'dev.json'), '{"kg_name": "library"}');
    const j = await fkgqa('partition', '--source', src, '--out', path.join(tmpDir(), 's'));
    expect(j.code).toBe(2);
    expect(j.stderr).toContain('dev.json: expected a JSON array');
    const u = await fkgqa('partition', '--endpoint-base', 'not a url', '--out', path.join(tmpDir(), 's'));
    expect(u.code).toBe(2);
    expect(u.stderr).toContain('--endpoint-base must be an absolute URL, got "not a url"');
    const k = await fkgqa('partition', '--kg', 'nowhere', '--out', path.join(tmpDir(), 's'));
    expect(k.code).toBe(2);
    expect(k.stderr).toContain('--kg nowhere: no such graph');
  });

  it('names an unknown option before a missing required one; a missing required option is still named', async () => {
    const bogus = await fkgqa('eval', '--bogus');
    expect([bogus.code, bogus.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: unknown option '--bogus'"]);
    const merge = await fkgqa('merge', '--nothing-here', 'a.jsonl');
    expect(merge.stderr.split('\n')[0]).toBe("fkgqa: error: unknown option '--nothing-here'");
    const out = await fkgqa('merge', 'a.jsonl');
    expect([out.code, out.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: required option '--out <file>' not specified"]);
  });

  it('names an unknown option before an option without its argument, on every command; the missing argument is still named', async () => {
    const stats = await fkgqa('stats', '--bogus', '--shards');
    expect([stats.code, stats.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: unknown option '--bogus'"]);
    const { program } = await import('../src/cli/program.js');
    for (const c of program().commands) {
      const last = c.options.find((o) => o.required && o.long !== undefined)!;
      // A usage error ends serve and mcp before they start: in this process too (refusal, tests/helpers.ts).
      const args = [c.name(), '--bogus', last.long!];
      const both = await fkgqaInProcess(args, { refusal: c.name() === 'serve' || c.name() === 'mcp' });
      expect([c.name(), both.code, both.stderr.split('\n')[0]]).toEqual([c.name(), 2, "fkgqa: error: unknown option '--bogus'"]);
    }
    const missing = await fkgqa('stats', '--timeout');
    expect([missing.code, missing.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: option '--timeout <ms>' argument missing"]);
    const eval_ = await fkgqa('eval', '--out');
    expect([eval_.code, eval_.stderr.split('\n')[0]]).toEqual([2, "fkgqa: error: option '--out <file>' argument missing"]);
  });
});

describe('cli / an unknown --kg lists the graphs there are, on every command that takes it', () => {
  it('exit 2 and the graphs of the build (or of the source) named, for each command with --kg', { tags: ['slow'], timeout: 300_000 }, async () => {
    const { program } = await import('../src/cli/program.js');
    const withKg = program()
      .commands.filter((c) => c.options.some((o) => o.long === '--kg'))
      .map((c) => c.name())
      .sort();
    const build = await demoBuild(tmpDir('fkgqa-kg-'));
    const out = tmpDir('fkgqa-kg-out-');
    const runs: Record<string, string[]> = {
      partition: ['--out', path.join(out, 'p')],
      stats: ['--shards', build],
      questions: ['--shards', build],
      synth: ['--source', DEMO, '--triples', '100', '--out', path.join(out, 's')],
      serve: ['--shards', build, '--port', '0'],
      verify: ['--shards', build],
      mcp: ['--shards', build, '--endpoint-base', 'http://127.0.0.1:9'],
      eval: ['--shards', build, '--agent', 'oracle', '--out', path.join(out, 'e.jsonl')],
      run: ['--shards', build, '--agent', 'oracle', '--out', path.join(out, 'r')],
    };
    expect(withKg).toEqual(Object.keys(runs).sort());
    const said: Record<string, [number | null, string]> = {};
    for (const [command, args] of Object.entries(runs)) {
      // serve and mcp refuse before they serve (refusal, tests/helpers.ts); every command in this process.
      const r = await fkgqaInProcess([command, ...args, '--kg', 'nowhere'], { refusal: command === 'serve' || command === 'mcp' });
      said[command] = [r.code, /\(graphs: [^)]*\)/.exec(r.stderr)?.[0] ?? r.stderr];
    }
    const listed: [number, string] = [2, '(graphs: library, observatory)'];
    expect(said).toEqual(Object.fromEntries(Object.keys(runs).map((c) => [c, listed])));
    expect(fs.readdirSync(out)).toEqual([]);
  });
});

describe('cli / one convention for output formats and option names', async () => {
  const out = path.join(tmpDir(), 'shards');
  // Built once: --json and --format json give the same partition summary (the digests are equal).
  const a = await fkgqa('partition', '--out', out, '--no-void', '--json', '--quiet');
  const b = await fkgqa('partition', '--out', out, '--no-void', '--format', 'json', '-q');

  it('partition prints JSON only on stdout with --json', async () => {
    expect(a.code).toBe(0);
    expect(a.stderr).toBe('');
    const j = JSON.parse(a.stdout);
    expect(j.summary.graphs).toBe(2);
    expect(j.summary.guarantees.federation).toEqual({ federated: 14, covered: 14, necessarilyEmpty: 0, exceptions: [] });
  });

  it('partition: --json and --format json print the same JSON; --format text the summary', async () => {
    expect([a.code, b.code]).toEqual([0, 0]);
    const [ja, jb] = [JSON.parse(a.stdout), JSON.parse(b.stdout)];
    expect(ja.summary.guarantees.determinism.outputDigest).toBe(jb.summary.guarantees.determinism.outputDigest);
    expect(jb.summary.guarantees.determinism.status).toBe('identical');
    expect((await fkgqa('partition', '--out', out, '--no-void', '--format', 'text', '-q')).stdout).toMatch(/^fkgqa partition: 2 graphs/);
  });

  it('describe: --void-engine (one name: --engine is refused), --json and --format json', async () => {
    const j = await fkgqa('describe', '--shards', out, '--void-engine', 'stream', '--json', '-q');
    const f = await fkgqa('describe', '--shards', out, '--void-engine', 'stream', '--format', 'json', '-q');
    expect([j.code, f.code]).toEqual([0, 0]);
    expect(JSON.parse(j.stdout)).toMatchObject({ graphs: 2, shards: 8, files: 18 });
    expect(JSON.parse(f.stdout)).toMatchObject({ graphs: 2, shards: 8, files: 18 });
    const old = await fkgqa('describe', '--shards', out, '--engine', 'sparql', '-q');
    expect(old.code).toBe(2);
    expect(old.stderr).toContain("unknown option '--engine'");
    const help = (await fkgqa('describe', '--help')).stdout;
    expect(help).toContain('--void-engine');
    expect(help).not.toContain('--engine <');
    expect((await fkgqa('partition', '--help')).stdout).toContain('--void-engine');
  });

  it('stats: --json and --format json print the same figures', async () => {
    const j = await fkgqa('stats', '--shards', out, '--json', '-q');
    const f = await fkgqa('stats', '--shards', out, '--format', 'json', '-q');
    expect([j.code, f.code]).toEqual([0, 0]);
    expect(JSON.parse(j.stdout).figures).toEqual(JSON.parse(f.stdout).figures);
    expect(JSON.parse(j.stdout).figures.shards.total).toBe(8);
    const bad = await fkgqa('stats', '--shards', out, '--json', '--format', 'csv', '-q');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--json is --format json: it cannot be combined with --format csv');
  });

  it('stats, score: the HTML report is --format html --out FILE (the library page, byte for byte); --html is an unknown option (exit 2), nothing written', async () => {
    const dir = tmpDir();
    const page = path.join(dir, 'report.html');
    const r = await fkgqa('stats', '--shards', out, '--format', 'html', '--out', page, '-q');
    expect([r.code, r.stdout]).toEqual([0, '']);
    const { stats } = await import('../src/index.js');
    const { formatStatsHtml } = await import('../src/report/html.js');
    expect(fs.readFileSync(page, 'utf8')).toBe(formatStatsHtml(await stats({ shards: out })));
    for (const args of [
      ['stats', '--shards', out, '--html', path.join(dir, 'old.html'), '-q'],
      ['score', path.join(dir, 'runs.jsonl'), '--shards', out, '--html', path.join(dir, 'old.html'), '-q'],
    ]) {
      const old = await fkgqa(...args);
      expect([args[0], old.code, old.stderr.split('\n')[0], old.stdout]).toEqual([args[0], 2, "fkgqa: error: unknown option '--html'", '']);
      expect((await fkgqa(args[0], '--help')).stdout).not.toContain('--html');
    }
    expect(fs.readdirSync(dir)).toEqual(['report.html']);
  });

  it('verify: --json and --format json print the same verdicts', { tags: ['slow'] }, async () => {
    const j = await fkgqa('verify', '--shards', out, '--query', 'library/q2', '--form', 'federated', '--json', '-q');
    const f = await fkgqa('verify', '--shards', out, '--query', 'library/q2', '--form', 'federated', '--format', 'json', '-q');
    expect([j.code, f.code]).toEqual([0, 0]);
    expect(JSON.parse(j.stdout).totals.comunica.federated).toMatchObject({ identical: 1, equivalent: 0, different: 0, failed: 0, failedOnBothSides: 0, answered: 1 });
    expect(Object.keys(JSON.parse(j.stdout).totals.comunica)).toEqual(['federated']);
    // The same verdicts and request counts; times differ from run to run.
    const verdicts = (out: string) => {
      const { ms: _ms, ...t } = JSON.parse(out).totals.comunica.federated;
      return t;
    };
    expect(verdicts(f.stdout)).toEqual(verdicts(j.stdout));
  });

  it('verify prints [k/n] per query on stderr', async () => {
    const r = await fkgqa('verify', '--shards', out, '--kg', 'library', '--form', 'federated');
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/\[1\/7\] library\/q1: gold 1 row; federated identical \d+ req \d+\.\d+ s \(\d+\.\d+ s\)/);
    expect(r.stderr).toMatch(/\[7\/7\] library\/q7: /);
  });
});

describe('cli / first run after the demo', () => {
  it('says the previous build in the folder was the demo, not that it "had other inputs"', async () => {
    // The demo built with default options (a copy of the shared demo build, tests/global-setup.ts).
    const out = await demoBuild(tmpDir());
    const src = copyDir(DEMO);
    const qs = JSON.parse(fs.readFileSync(path.join(src, 'dev.json'), 'utf8')).filter((q: { kg_name: string }) => q.kg_name === 'library');
    fs.writeFileSync(path.join(src, 'dev.json'), JSON.stringify(qs));
    fs.rmSync(path.join(src, 'kg', 'observatory.ttl'));
    const r = await fkgqa('partition', '--source', src, '--out', out, '--no-void', '-q');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('3. deterministic: the previous build in this folder was of other inputs (the demo); nothing to compare (run again to check)');
    const again = await fkgqa('partition', '--source', src, '--out', out, '--no-void', '-q');
    expect(again.stdout).toContain('3. deterministic: byte-identical to the previous build');
  });
});

describe('the repository ignores what a typical --out writes in it', () => {
  const git = (args: string[]) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  it.skipIf(git(['rev-parse', '--git-dir']).status !== 0)('runs2/, runs-qwen/, a run file or page at the top are ignored; the shipped demo, docs and tests are not', () => {
    const ignored = (p: string) => git(['check-ignore', '-q', '--no-index', p]).status === 0;
    const outputs = ['runs/a.jsonl', 'runs2/a.jsonl', 'runs-qwen/report.html', 'runs2/view.html', 'qwen3.jsonl', 'view.html', 'report.html'];
    const kept = ['datasets/demo/library.nt', 'docs/mcp.md', 'tests/cli.test.ts', 'README.md', 'package.json', 'bench/runs.js', 'src/eval/runs.ts'];
    expect([outputs.filter((p) => !ignored(p)), kept.filter(ignored)]).toEqual([[], []]);
  });
});
