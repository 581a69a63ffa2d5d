/**
 * run_sparql_query's notes from the VoID, in the setups that have VoID (`void_tool`, `kgvoyager`):
 * a triple pattern sent to an endpoint whose VoID says it cannot match there — its predicate has no
 * property partition at that endpoint, or, for `?x rdf:type C`, C has no class partition there —
 * is named beside the answer, as SPARQL-LLM (SIB) checks a query against the VoID before running
 * it. The answer itself is never changed (0 rows stay 0 rows); the other setups never see a note,
 * since the agent must not learn the VoID there (FKGQA paper, section 5). The VoID is the one at
 * hand without a request (`knownVoid`: the cache or the build's file); an endpoint without one gets
 * no note.
 */
import type sparqljs from 'sparqljs';
import { RDF_TYPE } from '../common/vocab.js';
import { parseQuery, prologuePrefixes } from '../sparql/parse.js';
import { sparqlIri } from '../sparql/results.js';
import { serviceClauses, triplesOutsideServices } from '../sparql/services.js';
import { findEndpoint } from '../federation/registry.js';
import type { McpToolContext, Setup } from './context.js';
import { knownVoid } from './void.js';
import { datasetIriOf, voidFacts, type VoidFacts } from './void-text.js';

/** The setups whose agent may learn the VoID, and so gets the notes. */
const SETUPS_WITH_VOID: readonly Setup[] = ['void_tool', 'kgvoyager'];

/** Facts of each endpoint's VoID per server (null: none at hand, or it says nothing usable). */
const factsCache = new WeakMap<McpToolContext, Map<string, VoidFacts | null>>();

function factsOf(ctx: McpToolContext, url: string): VoidFacts | null {
  let m = factsCache.get(ctx);
  if (!m) factsCache.set(ctx, (m = new Map()));
  if (m.has(url)) return m.get(url)!;
  const e = findEndpoint(ctx.registry, url);
  let facts: VoidFacts | null = null;
  const turtle = e && knownVoid(ctx, e);
  if (e && turtle) {
    try {
      facts = voidFacts(turtle, e.url, datasetIriOf(e)) ?? null;
    } catch {
      facts = null;
    }
  }
  // A description read from the cache may be replaced later: only the build's file is kept for good.
  if (e?.voidFile && facts) m.set(url, facts);
  return facts;
}

/**
 * The notes on a query's triple patterns that cannot match at the endpoint they are sent to (module
 * comment), one line per endpoint: `VoID note: <url> holds no :p triples and no instances of :C.`
 * (so the patterns using them match nothing there). Names are written with the
 * query's own prefixes. Empty in the setups without VoID, for a query that does not parse, and when
 * every pattern can match.
 */
export function voidNotes(ctx: McpToolContext, query: string): string[] {
  if (!SETUPS_WITH_VOID.includes(ctx.setup)) return [];
  const parsed = parseQuery(query, undefined);
  if (!parsed.ok) return [];
  const prefixes = prologuePrefixes(query);
  const missing = new Map<string, { properties: Set<string>; classes: Set<string> }>();
  for (const clause of serviceClauses(parsed.query.ast)) {
    if (clause.name.termType !== 'NamedNode') continue;
    const url = findEndpoint(ctx.registry, clause.name.value)?.url;
    const facts = url && factsOf(ctx, url);
    if (!url || !facts) continue;
    for (const t of triplesOutsideServices(clause.patterns) as sparqljs.Triple[]) {
      const p = t.predicate as { termType?: string; value?: string };
      if (p.termType !== 'NamedNode' || !p.value) continue;
      const m = missing.get(url) ?? { properties: new Set<string>(), classes: new Set<string>() };
      if (p.value === RDF_TYPE && t.object.termType === 'NamedNode') {
        if (!facts.classes.has(t.object.value)) m.classes.add(t.object.value);
      } else if (!facts.properties.has(p.value)) m.properties.add(p.value);
      if (m.properties.size || m.classes.size) missing.set(url, m);
    }
  }
  return [...missing].map(([url, m]) => {
    const what = [
      ...(m.properties.size ? [`no ${[...m.properties].map((x) => sparqlIri(x, prefixes)).join(', ')} triples`] : []),
      ...(m.classes.size ? [`no instances of ${[...m.classes].map((x) => sparqlIri(x, prefixes)).join(', ')}`] : []),
    ];
    return `VoID note: <${url}> holds ${what.join(' and ')}.`;
  });
}
