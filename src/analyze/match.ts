import type * as RDF from '@rdfjs/types';
import type { Triple } from '../load/triples.js';
import { patternKey, type PatternTerm, type TriplePattern } from './patterns.js';

/** A constant of a pattern in the form compared with data terms. */
type Constant = { kind: 'iri'; value: string } | { kind: 'literal'; value: string; datatype: string; language: string };

/** A pattern prepared for matching (see PatternMatcher.candidates). */
export interface CompiledPattern {
  index: number;
  subject?: string; // constant IRI of the subject
  subjectVar?: string;
  object?: Constant;
  objectVar?: string;
  /** Predicate variable name, if the predicate is a variable. */
  predicateVar?: string;
}

function constant(t: PatternTerm): Constant | undefined {
  if (t.termType === 'NamedNode') return { kind: 'iri', value: t.value };
  if (t.termType === 'Literal') {
    const lit = t as RDF.Literal;
    return { kind: 'literal', value: lit.value, datatype: lit.datatype?.value ?? '', language: (lit.language ?? '').toLowerCase() };
  }
  return undefined;
}

function variableName(t: PatternTerm): string | undefined {
  if (t.termType === 'Variable') return t.value;
  if (t.termType === 'BlankNode') return `_:${t.value}`;
  return undefined;
}

/**
 * Tells which of a set of triple patterns a data triple matches, i.e. whether the triple is a
 * solution of the pattern on its own (RDF term equality; language tags compared in lower case; a
 * variable repeated inside one pattern must bind the same term). A property-path pattern is taken
 * to match every triple whose predicate is one of the path's IRIs (an over-approximation: exact
 * path evaluation needs joins).
 */
export class PatternMatcher {
  /** The distinct patterns, by index. */
  readonly patterns: TriplePattern[] = [];
  /** Pattern text form → index. */
  readonly indexOf = new Map<string, number>();
  private byPredicate = new Map<string, CompiledPattern[]>();
  private anyPredicate: CompiledPattern[] = [];

  /** Adds a pattern (duplicates by text form are merged) and returns its index. */
  add(tp: TriplePattern): number {
    this.candidateCache.clear();
    const key = patternKey(tp);
    const known = this.indexOf.get(key);
    if (known !== undefined) return known;
    const index = this.patterns.length;
    this.patterns.push(tp);
    this.indexOf.set(key, index);
    const c: CompiledPattern = { index };
    const s = constant(tp.subject);
    if (s) {
      if (s.kind !== 'iri') return index; // a literal subject matches nothing
      c.subject = s.value;
    } else c.subjectVar = variableName(tp.subject);
    const o = constant(tp.object);
    if (o) c.object = o;
    else c.objectVar = variableName(tp.object);
    if (tp.predicate?.termType === 'NamedNode') this.push(tp.predicate.value, c);
    else if (tp.predicate?.termType === 'Variable') {
      c.predicateVar = tp.predicate.value;
      this.anyPredicate.push(c);
    } else for (const p of tp.pathIris ?? []) this.push(p, c);
    return index;
  }

  private push(p: string, c: CompiledPattern): void {
    let list = this.byPredicate.get(p);
    if (!list) this.byPredicate.set(p, (list = []));
    list.push(c);
  }

  /** Calls `onMatch` with the index of every pattern the triple matches. */
  match(t: Triple, onMatch: (index: number) => void): void {
    for (const c of this.candidates(t.predicate.value)) if (this.test(c, t)) onMatch(c.index);
  }

  /**
   * The patterns a triple with predicate `p` may match (those with `p` or a variable as predicate);
   * the same array for the same `p`, so callers may cache it per predicate.
   */
  candidates(p: string): readonly CompiledPattern[] {
    let list = this.candidateCache.get(p);
    if (!list) this.candidateCache.set(p, (list = [...(this.byPredicate.get(p) ?? []), ...this.anyPredicate]));
    return list;
  }
  private candidateCache = new Map<string, CompiledPattern[]>();

  /** Whether the triple matches one of the `candidates` of its predicate. */
  test(c: CompiledPattern, t: Triple): boolean {
    if (c.subject !== undefined && c.subject !== t.subject.value) return false;
    const o = c.object;
    if (o) {
      if (o.kind === 'iri') {
        if (t.object.termType !== 'NamedNode' || t.object.value !== o.value) return false;
      } else {
        if (t.object.termType !== 'Literal' || t.object.value !== o.value) return false;
        const lit = t.object as RDF.Literal;
        if ((lit.language ?? '').toLowerCase() !== o.language) return false;
        if (!o.language && (lit.datatype?.value ?? '') !== o.datatype) return false;
      }
    }
    // Repeated variables within the pattern must bind equal terms.
    const sv = c.subjectVar;
    const ov = c.objectVar;
    const pv = c.predicateVar;
    if (sv !== undefined && sv === ov && !(t.object.termType === 'NamedNode' && t.object.value === t.subject.value)) return false;
    if (pv !== undefined && pv === sv && t.predicate.value !== t.subject.value) return false;
    if (pv !== undefined && pv === ov && !(t.object.termType === 'NamedNode' && t.object.value === t.predicate.value)) return false;
    return true;
  }
}
