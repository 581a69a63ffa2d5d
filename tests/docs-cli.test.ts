import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliReference, optionTable, withGeneratedOptions } from '../src/cli/docs.js';
import { program } from '../src/cli/program.js';
import { ROOT } from './helpers.js';

describe('docs/cli.md: the options are documented once, generated from the command definitions', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/cli.md'), 'utf8');

  it('docs/cli.md is what `npm run docs:cli` writes (run it after changing an option)', () => {
    expect(withGeneratedOptions(doc, program())).toBe(doc);
  });

  it('lists every command with a table of all its visible options, defaults and choices', () => {
    const ref = cliReference(program());
    for (const c of ['partition', 'describe', 'stats', 'questions', 'synth', 'serve', 'verify', 'mcp', 'eval', 'score']) expect(ref).toContain(`### fkgqa ${c}\n`);
    const serve = program().commands.find((c) => c.name() === 'serve')!;
    const table = optionTable(serve);
    expect(table.split('\n')).toHaveLength(2 + serve.options.length);
    expect(table).toContain(
      '| `--federation-engine <name>` | `comunica` | the federation engine of /federation/sparql (src/federation/engine.ts; docs/federation.md) (one of: `comunica`, `jena`, `comunica-default`) |',
    );
    expect(table).toContain('| `--port <n>` | `7373` |');
    // A machine path is not a default.
    expect(ref).toContain('| `--source <dir>` | the demo, datasets/demo |');
    expect(ref).not.toContain(ROOT);
  });

  it('names every command function of the library (src/index.ts) in its Library API table', () => {
    const index = fs.readFileSync(path.join(ROOT, 'src/index.ts'), 'utf8');
    const functions = [...index.matchAll(/^export async function (\w+)/gm)].map((m) => m[1]);
    expect(functions).toEqual(expect.arrayContaining(['partition', 'query', 'view', 'runLoop']));
    const api = doc.slice(doc.indexOf('## Library API'), doc.indexOf('## Development'));
    const rows = [...api.matchAll(/^\| `(\w+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(functions.sort());
  });

  it('fails when the tables drift: an option added to a command shows as a difference', () => {
    const p = program();
    p.commands.find((c) => c.name() === 'stats')!.option('--new-option', 'an option added after the docs were written');
    expect(withGeneratedOptions(doc, p)).not.toBe(doc);
    expect(() => withGeneratedOptions('# no markers', p)).toThrow(/docs\/cli.md has no generated part/);
  });
});
