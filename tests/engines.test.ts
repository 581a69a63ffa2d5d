/**
 * The federation engines' names (`--federation-engine`) and the SERVICE check every engine makes
 * before it sends anything (src/federation/service-check.ts): pure functions, and one refusal of
 * `fkgqa verify` before any endpoint starts. What each engine answers over served shards is in
 * tests/engines.slow.test.ts (`npm run test:slow`).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine, FEDERATION_ENGINES, parseEngineList } from '../src/federation/engines.js';
import { findJena } from '../src/federation/jena/engine.js';
import { checkServiceQuery } from '../src/federation/service-check.js';
import { demoBuild, fkgqaInProcess, tmpDir } from './helpers.js';

const P = 'http://valuenet/ontop/';
/** A shard endpoint's URL as fkgqa serve names it (nothing listens there: the check sends nothing). */
const url = (shard: number) => `http://127.0.0.1:7373/library-shard${shard}/sparql`;
/** Books (shard 2: titles) joined with their years (shard 4). */
const JOIN = () => `SELECT ?title ?year WHERE { SERVICE <${url(2)}> { ?b <${P}book#title> ?title } SERVICE <${url(4)}> { ?b <${P}book#year> ?year } }`;

let shardsDir: string;
beforeAll(async () => {
  shardsDir = await demoBuild(tmpDir('fkgqa-engines-'));
});

describe('engines / names', () => {
  it('--federation-engine all is comunica and jena; lists are read by name, unknown names refused', () => {
    expect(FEDERATION_ENGINES).toEqual(['comunica', 'jena', 'comunica-default']);
    expect(parseEngineList('all')).toEqual(['comunica', 'jena']);
    expect(parseEngineList(['jena,comunica-default', 'jena'])).toEqual(['jena', 'comunica-default']);
    expect(() => parseEngineList('fedx')).toThrow('unknown federation engine "fedx": one of comunica, jena, comunica-default, or all (comunica, jena)');
  });

  it('a missing Jena is named with the apt-get line that installs it: by findJena, createEngine, and verify (exit 2, before any endpoint starts)', async () => {
    const install = 'apt-get install -y --no-install-recommends openjdk-17-jdk-headless libapache-jena-java';
    expect(findJena('/nonexistent')).toEqual({
      ok: false,
      reason: `Jena is not installed: /nonexistent/jena-arq.jar, /nonexistent/jena-base.jar, /nonexistent/jena-core.jar and 22 more missing (${install})`,
    });
    const classpath = '/nonexistent/jena-arq.jar';
    const saved = process.env.FKGQA_JENA_CLASSPATH;
    process.env.FKGQA_JENA_CLASSPATH = classpath;
    try {
      await expect(createEngine('jena', { endpoints: [] })).rejects.toThrow(`Jena is not installed: /nonexistent/jena-arq.jar missing (${install})`);
    } finally {
      if (saved === undefined) delete process.env.FKGQA_JENA_CLASSPATH;
      else process.env.FKGQA_JENA_CLASSPATH = saved;
    }
    // The CLI in this process (tests/helpers.ts), with the same environment for its run.
    const r = await fkgqaInProcess(['verify', '--shards', shardsDir, '--federation-engine', 'all', '-q'], { env: { FKGQA_JENA_CLASSPATH: classpath } });
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 2,
      stdout: '',
      stderr: `fkgqa: error: --federation-engine: jena cannot run here: Jena is not installed: /nonexistent/jena-arq.jar missing (${install})\n`,
    });
  });
});

describe('engines / the SERVICE check every engine makes first', () => {
  it('refuses a triple pattern outside SERVICE, naming it', () => {
    const r = checkServiceQuery(`SELECT * { ?s <${P}book#title> ?t SERVICE <${url(4)}> { ?s <${P}book#year> ?y } }`, [url(4)]);
    expect(r).toEqual({
      ok: false,
      error: `the triple pattern ?s <${P}book#title> ?t is outside every SERVICE clause: a federation engine has no data of its own; put it inside SERVICE <endpoint URL> { … }`,
    });
  });
  it('refuses an unregistered and a variable SERVICE target and FROM; accepts registered targets (a trailing slash aside)', () => {
    expect(checkServiceQuery('SELECT * { SERVICE <http://127.0.0.1:1/x/sparql> { ?s ?p ?o } }', [url(1)])).toEqual({
      ok: false,
      error: 'refused to contact http://127.0.0.1:1/x/sparql: not a registered endpoint (SERVICE <http://127.0.0.1:1/x/sparql>); nothing was sent',
    });
    expect(checkServiceQuery('SELECT * { SERVICE ?e { ?s ?p ?o } }', [url(1)])).toEqual({ ok: false, error: 'SERVICE ?e: a variable SERVICE target is refused; name a registered endpoint' });
    expect(checkServiceQuery(`SELECT * FROM <${url(1)}> { SERVICE <${url(1)}> { ?s ?p ?o } }`, [url(1)])).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^FROM and FROM NAMED are refused/),
    });
    const ok = checkServiceQuery(JOIN(), [url(2), `${url(4)}/`]);
    expect(ok.ok && ok.services).toEqual([url(2), url(4)]);
  });
});
