/**
 * The paper's trivial federation (FKGQA paper, section 2): for a BGP P = {t1 … tn} over endpoints
 * E, the pattern { UNION_{e∈E}(SERVICE e {t1}) … UNION_{e∈E}(SERVICE e {tn}) }. Applied to every BGP
 * of a query (the outer pattern, OPTIONAL, UNION and MINUS branches, sub-SELECTs, FILTER (NOT)
 * EXISTS), everything else left as it is.
 *
 * It gives the same answer as the query on the union of the endpoints when every triple is in
 * exactly one endpoint (guarantee 1 of the build: nothing lost, nothing doubled) and the BGPs hold
 * no property paths (a path would be evaluated per endpoint) and no blank nodes (their scope would
 * change); Spider4SPARQL's gold queries have neither.
 */
import sparqljs from 'sparqljs';

type Node = Record<string, unknown>;

/** Facts about a rewrite that can make the trivial form differ from the query. */
interface TrivialFederation {
  /** The rewritten query (sparqljs AST). */
  ast: sparqljs.SparqlQuery;
  /** The rewritten query as text (full IRIs). */
  text: string;
  /** Triple patterns rewritten. */
  triplePatterns: number;
  /** Why the trivial form may not be equivalent (property paths, blank nodes), if at all. */
  caveats: string[];
}

/**
 * Rewrites a query into its trivial federation over `endpoints`. The input AST is not modified.
 * @param ast a parsed query (IRIs already fixed, see parseQuery)
 * @param endpoints the SPARQL endpoint URLs of every shard of the graph
 * @param negatedEndpoints the endpoints for BGPs under MINUS and FILTER (NOT) EXISTS, when they
 *   differ (the oracle agent of fkgqa eval: a negated pattern must see every shard it matches)
 * @throws Error when `endpoints` is empty
 */
export function trivialFederation(ast: sparqljs.SparqlQuery, endpoints: string[], negatedEndpoints: string[] = endpoints): TrivialFederation {
  if (endpoints.length === 0) throw new Error('trivial federation needs at least one endpoint');
  let triplePatterns = 0;
  const caveats = new Set<string>();
  const service = (triple: Node): Node => ({
    type: 'group',
    patterns: [{ type: 'service', name: { termType: 'NamedNode', value: '' }, silent: false, patterns: [{ type: 'bgp', triples: [triple] }] }],
  });
  const unionOf = (triple: Node, over: string[]): Node => {
    triplePatterns++;
    for (const pos of ['subject', 'predicate', 'object'] as const) {
      const t = triple[pos] as Node;
      if (t.termType === 'BlankNode') caveats.add('blank node in a triple pattern: its scope changes');
      if (t.type === 'path') caveats.add('property path: evaluated per endpoint');
    }
    const branches = (over.length > 0 ? over : endpoints).map((url) => {
      const g = service(triple);
      ((g.patterns as Node[])[0].name as Node).value = url;
      return g;
    });
    return branches.length === 1 ? branches[0] : { type: 'union', patterns: branches };
  };
  const rewrite = (node: unknown, negated = false): unknown => {
    if (Array.isArray(node)) return node.map((x) => rewrite(x, negated));
    if (node === null || typeof node !== 'object') return node;
    const o = node as Node;
    if ('termType' in o) return o; // an RDF term: keep as is
    // Every BGP becomes one group (so it stays a single pattern wherever it was, e.g. in EXISTS).
    if (o.type === 'bgp') return { type: 'group', patterns: (o.triples as Node[]).map((t) => unionOf(t, negated ? negatedEndpoints : endpoints)) };
    const under = negated || o.type === 'minus' || (o.type === 'operation' && (o.operator === 'exists' || o.operator === 'notexists'));
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, rewrite(v, under)]));
  };
  const out = rewrite(ast) as sparqljs.SparqlQuery;
  const text = new sparqljs.Generator({ allPrefixes: false }).stringify({ ...out, prefixes: {} } as sparqljs.SparqlQuery);
  return { ast: out, text, triplePatterns, caveats: [...caveats] };
}

/** A shard endpoint as the oracle form needs it: the shard's name (`shard<N>`) and its endpoint URL. */
export interface ShardUrl {
  shard: string;
  url: string;
}

/**
 * The oracle form of a gold query (what `fkgqa eval`'s oracle agent submits, and the third form of
 * `fkgqa verify`): its trivial federation over exactly the shards its answer needs (realised
 * fan-out, section 4.2 of the FKGQA paper, computed by `fkgqa stats`). With no needed shard (the
 * gold answer uses no triple) it names the graph's first shard; with an unknown needed set
 * (provenance timed out) all shards. Patterns under MINUS and FILTER (NOT) EXISTS use no triple of
 * a solution (so realised fan-out leaves their shards out) but must see every triple that could
 * remove one: they go to `negated`, the shards where some of their triple patterns match
 * (`negatedShards` of src/federation/oracle.ts), or to the needed shards when none is given.
 * @param ast a parsed query (IRIs already fixed, see parseQuery)
 * @param endpoints the graph's shard endpoints, in shard order
 * @param needed shards the gold answer needs (`shard<N>`), or null when unknown
 * @param negated shards where a negated triple pattern matches (`shard<N>`)
 * @throws Error when `endpoints` is empty
 */
export function oracleFederation(ast: sparqljs.SparqlQuery, endpoints: ShardUrl[], needed: string[] | null, negated: string[] = []): TrivialFederation {
  if (endpoints.length === 0) throw new Error('the oracle form needs at least one endpoint');
  const urlOf = (shard: string) => endpoints.find((e) => e.shard === shard)?.url;
  const all = endpoints.map((e) => e.url);
  const urls = needed === null ? all : needed.length === 0 ? [all[0]] : needed.map(urlOf).filter((u): u is string => !!u);
  const neg = needed === null ? urls : negated.map(urlOf).filter((u): u is string => !!u);
  return trivialFederation(ast, urls, neg.length > 0 ? neg : urls);
}
