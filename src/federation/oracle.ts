/**
 * What the oracle form of a gold query needs to ask the endpoints (src/sparql/trivial.ts,
 * `oracleFederation`): the shards where a negated triple pattern (under MINUS or FILTER (NOT)
 * EXISTS) matches. Used by `fkgqa eval`'s oracle agent and `fkgqa verify`'s oracle form.
 */
import sparqljs from 'sparqljs';
import { negatedTriples } from '../sparql/negation.js';
import { parseQuery } from '../sparql/parse.js';
import type { ShardUrl } from '../sparql/trivial.js';
import { endpointOf, sameEndpoint, send } from '../common/http-client.js';

/**
 * The shards (`shard<N>`) where some negated triple pattern of the gold query matches: one
 * `ASK { t }` per pattern and shard endpoint (SPARQL 1.1 Protocol, POST; no redirect followed,
 * nothing sent outside `endpoints`). A gold query that does not parse has none.
 * @param goldText the gold query (with its prefix declarations, as in benchmark.json)
 * @param defaultPrefix the build's default prefix
 * @param endpoints the graph's shard endpoints
 * @param timeoutMs time limit of each ASK, in ms
 * @throws Error when an endpoint does not answer, or answers with an error status
 */
export async function negatedShards(goldText: string, defaultPrefix: string, endpoints: ShardUrl[], timeoutMs = 30_000): Promise<string[]> {
  const parsed = parseQuery(goldText, defaultPrefix);
  if (!parsed.ok) return [];
  const triples = negatedTriples(parsed.query.ast);
  if (triples.length === 0) return [];
  const gen = new sparqljs.Generator({ allPrefixes: false });
  const asks = triples.map((t) => gen.stringify({ type: 'query', queryType: 'ASK', prefixes: {}, where: [{ type: 'bgp', triples: [t] }] } as unknown as sparqljs.SparqlQuery));
  const out: string[] = [];
  for (const e of endpoints) {
    for (const q of asks) {
      const res = await send(
        {
          url: e.url,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
          body: new URLSearchParams({ query: q }).toString(),
          signal: AbortSignal.timeout(timeoutMs),
        },
        { allowed: (u) => endpoints.some((x) => sameEndpoint(x.url, endpointOf(u))) },
      );
      if (res.status < 200 || res.status > 299) throw new Error(`${e.url} answered ${res.status} to ${q}`);
      if ((JSON.parse(res.text ?? '') as { boolean?: boolean }).boolean) {
        out.push(e.shard);
        break;
      }
    }
  }
  return out;
}
