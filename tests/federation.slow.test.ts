/**
 * The long federation run of the federation layer (long federation runs go to
 * `npm run test:slow`): every distinct gold query of the demo (14) through routing and each
 * federation engine (comunica, jena where its tests run, comunica-default) over two `fkgqa serve`
 * processes, compared with the gold answers. At load 15 on 2 cores each engine took 30-45 s of wall.
 * The first gold query of each graph, and an endpoint that answers no SPARQL result, through the
 * engines other than comunica. tests/federation.test.ts keeps both on comunica.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openBuild } from '../src/build/open.js';
import { FEDERATION_ENGINES } from '../src/federation/engines.js';
import { demoBuild, engineTestsRun, serveProcess, tmpDir } from './helpers.js';
import { goldThroughEngine, itNamesNonSparqlEndpoint, nonSparqlEndpoints } from './federation-fixture.js';

let shards: string;
let digest: string;
/** Per engine: whether its tests run here (Jena needs Java and Debian's Jena; see engineTestsRun). */
const ENGINE_TESTS_RUN = Object.fromEntries(await Promise.all(FEDERATION_ENGINES.map(async (e) => [e, await engineTestsRun(e)] as const)));

beforeAll(async () => {
  // The demo build with the gold answers of fkgqa stats (made here: test:slow has no global setup).
  shards = await demoBuild(tmpDir('fkgqa-fed-'), { gold: true });
  digest = openBuild(shards, { checkShards: false }).build.outputDigest;
}, 300_000);

describe('federation / one registry over two fkgqa serve processes (slow: every gold query through every engine)', () => {
  let a: Awaited<ReturnType<typeof serveProcess>>;
  let b: Awaited<ReturnType<typeof serveProcess>>;
  let stateA: string;
  let stateB: string;
  beforeAll(async () => {
    stateA = tmpDir('fkgqa-fed-a-');
    stateB = tmpDir('fkgqa-fed-b-');
    [a, b] = await Promise.all([
      serveProcess(['--shards', shards, '--kg', 'library', '--state', stateA, '--port', '0']),
      serveProcess(['--shards', shards, '--kg', 'observatory', '--state', stateB, '--port', '0']),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  const endpointsFiles = () => [path.join(stateA, 'endpoints.json'), path.join(stateB, 'endpoints.json')];
  for (const engine of FEDERATION_ENGINES) {
    it.runIf(ENGINE_TESTS_RUN[engine])(`answers every gold query of both graphs through routing and the ${engine} engine as gold does`, async () => {
      await goldThroughEngine({ shards, digest, endpointsFiles: endpointsFiles(), engine });
    });
  }
  // The first gold query of each graph through comunica is in tests/federation.test.ts (`npm test`).
  for (const engine of FEDERATION_ENGINES.filter((e) => e !== 'comunica')) {
    it.runIf(ENGINE_TESTS_RUN[engine])(`answers the first gold query of each graph through routing and the ${engine} engine as gold does, and one query over both hosts`, async () => {
      await goldThroughEngine({ shards, digest, endpointsFiles: endpointsFiles(), engine, perGraph: 1 });
    });
  }
});

describe('federation / an endpoint that answers no SPARQL result inside a multi-SERVICE query is named, with what it answered (slow: the engines other than comunica)', () => {
  const f = nonSparqlEndpoints(() => shards);
  // comunica: tests/federation.test.ts (`npm test`).
  for (const engine of FEDERATION_ENGINES.filter((e) => e !== 'comunica')) itNamesNonSparqlEndpoint(engine, f, ENGINE_TESTS_RUN[engine]);
});
