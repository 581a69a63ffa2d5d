/**
 * The committed Comunica engine against its configuration (one compile of the
 * configuration with Components.js takes 8 s of CPU, so it runs in `npm run test:slow`, which CI
 * runs too).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tmpDir } from './helpers.js';

describe('engines / the compiled Comunica configuration', () => {
  it('the committed engine is the compile of its configuration (npm run build:comunica-engine -- --check), without bind joins or COUNT queries; a stale one fails the check', () => {
    const engine = fs.readFileSync(path.join(ROOT, 'federation/comunica/engine-service.cjs'), 'utf8');
    expect(engine).toContain("'cardinalityCountQueries': false");
    expect(engine).toContain("'forceSparqlEndpoint': true");
    expect(engine).not.toContain('@comunica/actor-rdf-join-inner-multi-bind');
    expect(engine).not.toContain('@comunica/actor-rdf-join-optional-bind');
    // One statement changed: the check must fail on it (one compile checks both files).
    const stale = path.join(tmpDir('fkgqa-comunica-'), 'stale.cjs');
    fs.writeFileSync(stale, engine.replace("'cardinalityCountQueries': false", "'cardinalityCountQueries': true"));
    const committed = path.join(ROOT, 'federation/comunica/engine-service.cjs');
    const r = (() => {
      try {
        return { code: 0, out: execFileSync(process.execPath, [path.join(ROOT, 'federation/comunica/compile.js'), '--check', committed, stale], { encoding: 'utf8' }) };
      } catch (e) {
        return { code: (e as { status: number }).status, out: String((e as { stdout: string }).stdout) };
      }
    })();
    expect(r).toEqual({ code: 1, out: `engine-service.cjs is the compile of config-service.json\n${stale} is stale: run npm run build:comunica-engine\n` });
  });
});
