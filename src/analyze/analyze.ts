import { RDF_TYPE } from '../common/vocab.js';
import type { GoldQuery } from '../load/questions.js';
import type { Ontology } from '../load/ontology.js';
import { parseQuery } from '../sparql/parse.js';
import { requiredPatterns, triplePatterns, type PatternScope, type TriplePattern } from './patterns.js';

/** Options of the analysis (defaults: the method as defined in section 4.1). */
interface AnalysisOptions extends PatternScope {
  /** Infer classes from rdfs:domain and rdfs:range of the ontology (default true); false: explicit rdf:type only. */
  inferClasses?: boolean;
}

/** The kinds of sharding of section 4.1 of the FKGQA paper. */
export type ShardingKind = 'predicate' | 'class' | 'horizontal';
export const SHARDING_KINDS: readonly ShardingKind[] = ['predicate', 'class', 'horizontal'];

/**
 * The analysis of one distinct gold query (section 4.1, "Applicability Criteria"):
 * T(q), P(q), C(q), S(q) and which shardings apply.
 */
export interface QueryAnalysis {
  /** `<kg>/q<N>`, as in GoldQuery. */
  id: string;
  kg: string;
  /** The query regenerated with full IRIs (see ParsedQuery.normalized). */
  normalized: string;
  /** T(q): the distinct triple patterns of the query, anywhere in it. */
  patterns: TriplePattern[];
  /** Keys of the patterns of T(q) every solution must match (see `requiredPatterns`). */
  required: string[];
  /** An aggregate without GROUP BY: one answer row even without solutions. */
  implicitGroup: boolean;
  /**
   * P(q): the predicate IRIs of T(q) (property-path IRIs included), rdf:type included, sorted.
   * Counting rdf:type is the paper's reading: it reproduces its 95.94% predicate applicability
   * exactly (992 of the 1,034 dev questions).
   */
  predicates: string[];
  /**
   * C(q): class IRIs inferable from T(q): objects of rdf:type patterns, rdfs:domain of predicates,
   * rdfs:range (classes, not datatypes) of predicates. Sorted.
   */
  classes: string[];
  /** S(q): names of variables (and blank nodes, which act as variables) in subject position, sorted. */
  subjectVariables: string[];
  /** Whether each kind of sharding applies: |P|≥2; |C|≥2; |S|≥1 and |C|≥1. */
  applicable: Record<ShardingKind, boolean>;
}

/** A query that does not parse: reported with its text and the parser's message, then left out. */
export interface UnparsableQuery {
  id: string;
  kg: string;
  text: string;
  error: string;
}

/**
 * Computes P(q), C(q), S(q) and the applicable shardings of a parsed query's patterns.
 * @param patterns T(q)
 * @param ontology domain and range axioms of the query's graph
 * @param inferClasses use the ontology's domain and range (false: explicit rdf:type patterns only)
 */
export function applicability(patterns: TriplePattern[], ontology: Ontology, inferClasses = true): Pick<QueryAnalysis, 'predicates' | 'classes' | 'subjectVariables' | 'applicable'> {
  const predicates = new Set<string>();
  const classes = new Set<string>();
  const subjects = new Set<string>();
  for (const tp of patterns) {
    if (tp.subject.termType === 'Variable' || tp.subject.termType === 'BlankNode') {
      subjects.add(tp.subject.termType === 'Variable' ? tp.subject.value : `_:${tp.subject.value}`);
    }
    const iris = tp.predicate?.termType === 'NamedNode' ? [tp.predicate.value] : (tp.pathIris ?? []);
    for (const p of iris) {
      predicates.add(p);
      if (p === RDF_TYPE) {
        if (tp.predicate && tp.object.termType === 'NamedNode') classes.add(tp.object.value);
        continue;
      }
      if (!inferClasses) continue;
      for (const c of ontology.domain.get(p) ?? []) classes.add(c);
      for (const c of ontology.range.get(p) ?? []) classes.add(c);
    }
  }
  const sort = (s: Set<string>) => [...s].sort();
  return {
    predicates: sort(predicates),
    classes: sort(classes),
    subjectVariables: sort(subjects),
    applicable: {
      predicate: predicates.size >= 2,
      class: classes.size >= 2,
      horizontal: subjects.size >= 1 && classes.size >= 1,
    },
  };
}

/**
 * Analyses the distinct gold queries of one graph.
 * @returns the analyses of the queries that parse, and the queries that do not (with the message)
 */
export function analyzeQueries(queries: GoldQuery[], ontology: Ontology, defaultPrefix: string, options: AnalysisOptions = {}): { analyses: QueryAnalysis[]; unparsable: UnparsableQuery[] } {
  const analyses: QueryAnalysis[] = [];
  const unparsable: UnparsableQuery[] = [];
  for (const q of queries) {
    const parsed = parseQuery(q.text, defaultPrefix);
    if (!parsed.ok) {
      unparsable.push({ id: q.id, kg: q.kg, text: q.text, error: parsed.error });
      continue;
    }
    const patterns = triplePatterns(parsed.query.ast, options);
    const required = requiredPatterns(parsed.query.ast);
    analyses.push({
      id: q.id,
      kg: q.kg,
      normalized: parsed.query.normalized,
      patterns,
      required: required.keys,
      implicitGroup: required.implicitGroup,
      ...applicability(patterns, ontology, options.inferClasses ?? true),
    });
  }
  return { analyses, unparsable };
}
