import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { tmpDir } from './helpers.js';

/**
 * The layering of docs/architecture.md, checked on the code's own imports (TypeScript's
 * `preProcessFile`: static imports, `export … from`, dynamic `import()`, type-only imports too).
 * A layer may import only the layers listed for it; no module imports itself through others.
 */
const SRC = path.resolve(import.meta.dirname, '../src');

/** Folder under src/ → the folders it may import (besides itself). `(root)` is src/index.ts. */
const STAGES = ['load', 'analyze', 'plan', 'materialize', 'describe', 'synth', 'partition', 'report'];
export const ALLOWED: Record<string, string[]> = {
  common: [],
  sparql: ['common'],
  answers: ['common', 'sparql'],
  build: ['common', 'sparql'],
  load: ['common', 'sparql', 'build'],
  analyze: ['common', 'sparql', 'build', 'load'],
  plan: ['common', 'sparql', 'build', 'analyze'],
  materialize: ['common', 'sparql', 'build', 'load', 'analyze', 'plan'],
  describe: ['common', 'sparql', 'build', 'load'],
  synth: ['common', 'sparql', 'build', 'load'],
  partition: ['common', 'sparql', 'build', 'load', 'analyze', 'plan', 'materialize', 'describe'],
  report: ['common', 'sparql', 'answers', 'build', 'load', 'analyze', 'plan', 'materialize', 'describe', 'partition'],
  federation: ['common', 'sparql', 'build', 'describe'],
  serve: ['common', 'sparql', 'build', 'federation', 'describe'],
  verify: ['common', 'sparql', 'answers', 'build', 'federation'],
  mcp: ['common', 'sparql', 'answers', 'build', 'federation', 'describe'],
  eval: ['common', 'sparql', 'build', 'federation', 'mcp'],
  score: ['common', 'sparql', 'answers', 'build', 'report'],
  view: ['common', 'sparql', 'answers', 'build', 'report', 'score'],
  query: ['common', 'sparql', 'build', 'federation'],
  checks: ['common', 'sparql', 'answers', 'build', 'federation', ...STAGES, 'serve', 'verify', 'mcp', 'eval', 'score'],
  workflow: ['common', 'sparql', 'answers', 'build', 'federation', ...STAGES, 'serve', 'eval', 'score', 'view'],
  '(root)': ['common', 'sparql', 'answers', 'build', 'federation', ...STAGES, 'serve', 'verify', 'mcp', 'eval', 'score', 'checks', 'view', 'query', 'workflow'],
  cli: ['(root)', 'common', 'sparql', 'answers', 'build', 'federation', ...STAGES, 'serve', 'verify', 'mcp', 'eval', 'score', 'checks', 'view', 'query', 'workflow'],
};

/** Single files a layer may import from a layer it may not otherwise import: score and view read eval's run records (the record and its reader) only. */
const RUN_RECORDS = ['eval/record.ts', 'eval/run-reader.ts'];
const ONLY: Record<string, Record<string, string[]>> = { score: { eval: RUN_RECORDS }, view: { eval: RUN_RECORDS } };

interface Edge {
  from: string;
  to: string;
  spec: string;
}

/** Every relative import between files of src/ (paths relative to src/, `.ts`). */
function imports(dir = SRC): { files: string[]; edges: Edge[] } {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts')) files.push(path.relative(dir, p).split(path.sep).join('/'));
    }
  };
  walk(dir);
  const edges: Edge[] = [];
  for (const f of files) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(dir, f), 'utf8'), true, true);
    for (const i of info.importedFiles) {
      if (!i.fileName.startsWith('.')) continue;
      const to = path
        .relative(dir, path.resolve(path.dirname(path.join(dir, f)), i.fileName))
        .split(path.sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      edges.push({ from: f, to, spec: i.fileName });
    }
  }
  return { files, edges };
}

const layerOf = (file: string) => (file.includes('/') ? file.split('/')[0] : '(root)');

/** The imports that break the layering, as `from → to`. */
export function forbiddenImports(edges: Edge[]): string[] {
  const bad: string[] = [];
  for (const e of edges) {
    const a = layerOf(e.from);
    const b = layerOf(e.to);
    if (a === b) continue;
    const allowed = ALLOWED[a];
    if (!allowed) bad.push(`${e.from}: its folder ${a}/ is not a layer of docs/architecture.md`);
    else if (!allowed.includes(b) && !(ONLY[a]?.[b] ?? []).includes(e.to)) bad.push(`${e.from} → ${e.to} (${a}/ may not import ${b}/)`);
  }
  return bad;
}

/** Import cycles between modules (strongly connected components of more than one file, or a file importing itself). */
export function cycles(files: string[], edges: Edge[]): string[][] {
  const next = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) if (next.has(e.to)) next.get(e.from)!.push(e.to);
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v)!) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || next.get(v)!.includes(v)) out.push(scc.sort());
    }
  };
  for (const f of files) if (!idx.has(f)) visit(f);
  return out;
}

describe('architecture (docs/architecture.md)', () => {
  const { files, edges } = imports();

  it('every import follows the layering: lower layers never import higher ones, serve/verify/mcp never each other', () => {
    expect(edges.length).toBeGreaterThan(300);
    expect(forbiddenImports(edges)).toEqual([]);
  });

  it('no module imports itself through others (no import cycle)', () => {
    expect(cycles(files, edges)).toEqual([]);
  });

  it('only src/index.ts lives directly under src/; every folder is a layer', () => {
    expect(files.filter((f) => !f.includes('/'))).toEqual(['index.ts']);
    expect([...new Set(files.map(layerOf))].filter((l) => !ALLOWED[l])).toEqual([]);
  });

  it('the check fails on a forbidden import and on a cycle', () => {
    expect(forbiddenImports([{ from: 'mcp/server.ts', to: 'serve/server.ts', spec: '../serve/server.js' }])).toEqual(['mcp/server.ts → serve/server.ts (mcp/ may not import serve/)']);
    expect(forbiddenImports([{ from: 'sparql/parse.ts', to: 'federation/routing.ts', spec: '../federation/routing.js' }])).toHaveLength(1);
    expect(forbiddenImports([{ from: 'score/score.ts', to: 'eval/record.ts', spec: '../eval/record.js' }])).toEqual([]);
    expect(forbiddenImports([{ from: 'score/score.ts', to: 'eval/agents.ts', spec: '../eval/agents.js' }])).toHaveLength(1);
    expect(forbiddenImports([{ from: 'view/view.ts', to: 'eval/record.ts', spec: '../eval/record.js' }])).toEqual([]);
    expect(forbiddenImports([{ from: 'view/view.ts', to: 'mcp/server.ts', spec: '../mcp/server.js' }])).toEqual(['view/view.ts → mcp/server.ts (view/ may not import mcp/)']);
    expect(forbiddenImports([{ from: 'query/query.ts', to: 'serve/server.ts', spec: '../serve/server.js' }])).toHaveLength(1);
    const e = (from: string, to: string) => ({ from, to, spec: to });
    expect(cycles(['a.ts', 'b.ts', 'c.ts'], [e('a.ts', 'b.ts'), e('b.ts', 'c.ts'), e('c.ts', 'a.ts')])).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(cycles(['a.ts', 'b.ts'], [e('a.ts', 'b.ts')])).toEqual([]);
  });
});

describe('architecture / the CLI loads a command only when it runs', () => {
  /** The modules a `fkgqa` run imports (ESM resolve hook), as paths below node_modules/ or dist/. */
  function modulesLoaded(args: string[]): string[] {
    const dir = tmpDir('fkgqa-modules-');
    const trace = path.join(dir, 'trace.txt');
    fs.writeFileSync(
      path.join(dir, 'hook.mjs'),
      `import fs from 'node:fs';\nexport async function resolve(s, c, next) { const r = await next(s, c); fs.appendFileSync(${JSON.stringify(trace)}, r.url + '\\n'); return r; }\n`,
    );
    fs.writeFileSync(path.join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(path.join(dir, 'hook.mjs')).href)});\n`);
    const r = spawnSync(process.execPath, ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, path.join(SRC, '../bin/fkgqa.js'), ...args], { cwd: dir, encoding: 'utf8' });
    expect(r.status).toBe(0);
    return [...new Set(fs.readFileSync(trace, 'utf8').split('\n').filter(Boolean))];
  }
  const heavy = (mods: string[]) =>
    mods
      .filter((m) => /node_modules\/(@modelcontextprotocol|zod|@comunica)\//.test(m))
      .map((m) =>
        m
          .replace(/.*node_modules\//, '')
          .split('/')
          .slice(0, 2)
          .join('/'),
      );

  it('partition (--help and a build of a demo graph) loads neither the MCP SDK, nor zod, nor Comunica', () => {
    expect(heavy(modulesLoaded(['partition', '--help']))).toEqual([]);
    const build = modulesLoaded(['partition', '--kg', 'library', '--out', 'shards', '-q']);
    expect(heavy(build)).toEqual([]);
    // …but it loads the method: the ASP solver and the partition stages.
    expect(build.some((m) => m.endsWith('/dist/partition/graph.js'))).toBe(true);
    expect(build.some((m) => m.includes('node_modules/clingo-wasm/'))).toBe(true);
  });

  it('fkgqa --help and mcp --help load neither the MCP SDK, nor zod, nor Comunica', () => {
    expect(heavy(modulesLoaded(['mcp', '--help']))).toEqual([]);
    expect(heavy(modulesLoaded(['--help']))).toEqual([]);
  });
});
