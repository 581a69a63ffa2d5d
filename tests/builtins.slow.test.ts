/**
 * SPARQL 1.1 built-ins evaluated by the federation engine, outside every SERVICE clause, over values
 * read from the shards of the demo build (tests/builtins.ts), on comunica and jena (where Java and
 * Debian's Jena are installed): each answer equals the reference's (oxigraph over the shards as named
 * graphs, SERVICE spelled GRAPH), compared as `fkgqa score` compares answers, and the engines' answers
 * equal each other, but for the cases the fixture marks (`adjust`: every engine alike, away from the
 * reference, and `comunica`: a divergence left as it is, asserted so that a change is seen); the
 * calls no engine answers as the reference are refused by every engine and by routing, in the same
 * words, before any request. Slow: two engines and about a hundred federated queries.
 */
import type oxigraph from 'oxigraph';
import type sparqljs from 'sparqljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { termKey } from '../src/answers/compare.js';
import type { FederationEngine } from '../src/federation/engine.js';
import { createEngine } from '../src/federation/engines.js';
import { registryFromUrls } from '../src/federation/registry.js';
import { planQuery } from '../src/federation/routing.js';
import type { SparqlResults } from '../src/sparql/results.js';
import { groupConcatSeparators } from '../src/sparql/inspect.js';
import { parseSparql } from '../src/sparql/parse.js';
import { serve, type ShardServer } from '../src/serve/server.js';
import { demoBuild, engineTestsRun, tmpDir } from './helpers.js';
import { type BuiltinCase, CASES, referenceStore } from './builtins.js';

const JSON_RESULTS = 'application/sparql-results+json';
const ENGINES = ['comunica', ...((await engineTestsRun('jena')) ? ['jena'] : [])];
const GRAPHS = ['observatory', 'library'];

/** An answer's rows as `fkgqa score` compares them (`termKey`; a GROUP_CONCAT's parts sorted, as `compareResults` compares them), sorted. */
const rows = (r: SparqlResults, concats: Record<string, string>): string[] =>
  (r.results?.bindings ?? [])
    .map((row) =>
      Object.keys(row)
        .sort()
        .map((v) => `${v}=${termKey(concats[v] && row[v].type === 'literal' ? { ...row[v], value: row[v].value.split(concats[v]).sort().join(concats[v]) } : row[v])}`)
        .join(' '),
    )
    .sort();

describe('built-ins outside SERVICE: every engine answers as oxigraph over the shards, or every engine refuses alike (demo build)', () => {
  let server: ShardServer;
  let store: oxigraph.Store;
  let url: (kg: string, n: number) => string;
  const engines: Record<string, FederationEngine> = {};
  beforeAll(async () => {
    const shards = await demoBuild(tmpDir('fkgqa-builtins-'));
    server = await serve({ shards, kgs: GRAPHS, writeFiles: false, timeoutMs: 60_000 });
    url = (kg, n) => server.endpoint(`${kg}-shard${n}`)!.url;
    store = referenceStore(shards, GRAPHS, url);
    const all = GRAPHS.flatMap((kg) => [1, 2, 3, 4].map((n) => url(kg, n)));
    for (const e of ENGINES) {
      engines[e] = await createEngine(e, { endpoints: all, parallel: 1 });
      await engines[e].warm?.();
    }
  }, 300_000);
  afterAll(async () => {
    for (const e of Object.values(engines)) await e.close();
    await server?.close();
  });

  it("runs on comunica, and on jena where Java and Debian's Jena are installed", () => {
    expect(Object.keys(engines)).toEqual(ENGINES);
  });

  const federated = (c: BuiltinCase) => c.query((kg, n, body) => `SERVICE <${url(kg, n)}> { ${body} }`);

  for (const c of CASES.filter((x) => x.refused)) {
    it(`refused: ${c.name}`, async () => {
      const text = federated(c);
      const plan = planQuery(text, registryFromUrls(GRAPHS.flatMap((kg) => [1, 2, 3, 4].map((n) => url(kg, n)))), { maxQueryChars: 8000 });
      const message = plan.ok ? '' : plan.message;
      expect(message.startsWith(c.refused!), message).toBe(true);
      expect(message).toContain('nothing was sent');
      expect(plan.ok ? '' : plan.errorClass).toBe('unsupported-shape');
      for (const [name, engine] of Object.entries(engines)) {
        expect(await engine.query(text, JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } }), name).toEqual({ status: 'error', error: message, httpStatus: 400, requests: {} });
      }
    });
  }

  for (const c of CASES.filter((x) => !x.refused)) {
    it(c.name, { timeout: 120_000 }, async () => {
      const concats = groupConcatSeparators(parseSparql(federated(c)) as sparqljs.SparqlQuery);
      const reference = rows(
        JSON.parse(
          store.query(
            c.query((kg, n, body) => `GRAPH <${url(kg, n)}> { ${body} }`),
            { results_format: JSON_RESULTS },
          ) as string,
        ) as SparqlResults,
        concats,
      );
      expect(reference.length > 0, 'the reference has rows').toBe(!c.empty);
      const answers: Record<string, string[]> = {};
      for (const [name, engine] of Object.entries(engines)) {
        const o = await engine.query(federated(c), JSON_RESULTS, { deadline: { ms: 60_000, from: 'call' } });
        expect(o.status === 'ok' ? 'ok' : `${o.status}: ${'error' in o ? o.error : ''}`, name).toBe('ok');
        answers[name] = rows(JSON.parse((o as { body: string }).body) as SparqlResults, concats);
      }
      for (const [name, answer] of Object.entries(answers)) {
        const change: (r: string) => string | undefined = (name === 'comunica' && c.comunica) || c.adjust || ((r) => r);
        const expected = reference.flatMap((r) => change(r) ?? []).sort();
        expect({ engine: name, rows: answer }, c.why).toEqual({ engine: name, rows: expected });
      }
      if (answers.jena && !c.comunica) expect(answers.comunica).toEqual(answers.jena);
    });
  }
});
