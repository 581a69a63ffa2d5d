/**
 * Scripted agents (no LLM), for baselines and tests. Each runs through the same loop and tools as
 * a model: turn 1 sends its query with run_sparql_query, turn 2 submits it with
 * submit_final_query (or, without the probe, turn 1 submits it).
 *
 * - `oracle`: the gold query in trivial-federation form over exactly the shards its answer needs
 *   (realised fan-out of `fkgqa stats`): every triple pattern a UNION of SERVICE calls over those
 *   shards. With no needed shard (the gold answer uses no triple) it names the graph's first shard;
 *   with an unknown needed set (provenance timed out) all shards. Patterns under MINUS and FILTER
 *   (NOT) EXISTS use no triple of a solution (so realised fan-out leaves their shards out) but
 *   must see every triple that could remove one: they go to the shards where some of their triple
 *   patterns match (`negatedShards`, an ASK per pattern and shard).
 * - `trivial`: the paper's trivial federation over all shards of the graph (src/sparql/trivial.ts).
 * - `single`: the gold query as it is, wrapped in one SERVICE to one endpoint (the first needed
 *   shard, else the first shard), sent straight to it: what a single endpoint answers alone.
 */
import sparqljs from 'sparqljs';
import { parseQuery } from '../sparql/parse.js';
import { oracleFederation, trivialFederation } from '../sparql/trivial.js';
import type { ChatModel, ChatReply, ChatRequest } from './chat.js';
import type { RunEndpoint } from './record.js';

import type { ScriptedAgent } from './record.js';

/**
 * The query a scripted agent submits.
 * @param agent which agent
 * @param goldText the gold query (with its prefix declarations, as in benchmark.json)
 * @param defaultPrefix the build's default prefix
 * @param endpoints the graph's shard endpoints
 * @param needed shards the gold answer needs (`shard<N>`), or null when unknown
 * @throws Error when the gold query does not parse
 */
export function scriptedQuery(agent: ScriptedAgent, goldText: string, defaultPrefix: string, endpoints: RunEndpoint[], needed: string[] | null, negated: string[] = []): string {
  const parsed = parseQuery(goldText, defaultPrefix);
  if (!parsed.ok) throw new Error(`gold query does not parse: ${parsed.error}`);
  const ast = parsed.query.ast;
  const urlOf = (shard: string) => endpoints.find((e) => e.shard === shard)?.url;
  if (agent === 'trivial')
    return trivialFederation(
      ast,
      endpoints.map((e) => e.url),
    ).text;
  if (agent === 'oracle') return oracleFederation(ast, endpoints, needed, negated).text;
  const target = (needed?.length ? urlOf(needed[0]) : undefined) ?? endpoints[0].url;
  const q = ast as sparqljs.SelectQuery;
  const wrapped = { ...q, prefixes: {}, where: [{ type: 'service', name: { termType: 'NamedNode', value: target }, silent: false, patterns: q.where ?? [] }] };
  return new sparqljs.Generator({ allPrefixes: false }).stringify(wrapped as unknown as sparqljs.SparqlQuery);
}

/**
 * A chat model that plays a fixed query: run it with run_sparql_query, then submit it; with
 * `probe` false it submits at once (one turn, half the query work: for baselines over the whole
 * benchmark).
 */
export class ScriptedModel implements ChatModel {
  readonly model = null;
  constructor(
    private readonly query: string,
    private readonly probe = true,
  ) {}

  async complete(request: ChatRequest): Promise<ChatReply> {
    const name = request.turn === 1 && this.probe ? 'run_sparql_query' : 'submit_final_query';
    return {
      message: { role: 'assistant', content: null, tool_calls: [{ id: `call_${request.turn}`, type: 'function', function: { name, arguments: JSON.stringify({ query: this.query }) } }] },
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      finishReason: 'tool_calls',
      retries: [],
    };
  }
}

/** The shards where a negated triple pattern of the gold query matches (moved to src/federation/oracle.ts, shared with verify). */
export { negatedShards } from '../federation/oracle.js';
