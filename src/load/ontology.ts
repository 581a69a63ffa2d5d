import fs from 'node:fs';
import * as oxigraph from 'oxigraph';
import { InputError, lineFromParserMessage } from '../common/errors.js';
import { OWL, RDF, RDF_TYPE, RDFS, RDFS_DOMAIN, RDFS_RANGE, XSD } from '../common/vocab.js';
import { MEDIA_TYPE, type RdfFormat } from './formats.js';
import { checkXmlEntities } from './xml-entities.js';

/**
 * What fkgqa takes from an ontology: the named classes given as rdfs:domain and rdfs:range of
 * properties (section 4.1 of the FKGQA paper infers query classes from them). Ranges that are
 * datatypes (XSD, rdfs:Literal, rdf:langString, or declared rdfs:Datatype) are left out.
 */
export interface Ontology {
  /** Property IRI → class IRIs of its rdfs:domain, sorted. */
  domain: Map<string, string[]>;
  /** Property IRI → class IRIs of its rdfs:range (classes only, no datatypes), sorted. */
  range: Map<string, string[]>;
  /** The file it was read from, or undefined for the empty ontology. */
  file?: string;
}

/** The ontology of a graph that has none: no domain or range axioms (only explicit types count). */
export const EMPTY_ONTOLOGY: Ontology = { domain: new Map(), range: new Map() };

function isDatatype(iri: string, declaredDatatypes: Set<string>): boolean {
  return iri.startsWith(XSD) || iri === `${RDFS}Literal` || iri === `${RDF}langString` || iri === `${RDF}PlainLiteral` || declaredDatatypes.has(iri);
}

/**
 * Reads rdfs:domain and rdfs:range axioms with a named class as object from an ontology in RDF/XML
 * or Turtle (parsed with oxigraph).
 * @throws InputError naming the file and line if it does not parse, or if it declares XML entities
 *   that are external, parameter or expand beyond a bound (see xml-entities.ts)
 */
export function readOntology(file: string, format: RdfFormat): Ontology {
  let quads: oxigraph.Quad[];
  const bytes = fs.readFileSync(file);
  if (format === 'rdf-xml') checkXmlEntities(bytes.toString('utf8'), file); // before oxigraph expands any entity
  try {
    quads = oxigraph.parse(bytes, { format: MEDIA_TYPE[format], base_iri: 'http://localhost/' });
  } catch (e) {
    const message = (e as Error).message ?? String(e);
    throw new InputError(`ontology does not parse: ${message}`, { file, line: lineFromParserMessage(message) });
  }
  const datatypes = new Set<string>();
  for (const q of quads) {
    if (q.predicate.value === RDF_TYPE && q.object.value === `${RDFS}Datatype`) datatypes.add(q.subject.value);
  }
  const domain = new Map<string, Set<string>>();
  const range = new Map<string, Set<string>>();
  for (const q of quads) {
    if (q.subject.termType !== 'NamedNode' || q.object.termType !== 'NamedNode') continue;
    const target = q.predicate.value === RDFS_DOMAIN ? domain : q.predicate.value === RDFS_RANGE ? range : undefined;
    if (!target) continue;
    const cls = q.object.value;
    if (cls === `${OWL}Thing` || cls === `${RDFS}Resource`) continue;
    if (target === range && isDatatype(cls, datatypes)) continue;
    let set = target.get(q.subject.value);
    if (!set) target.set(q.subject.value, (set = new Set()));
    set.add(cls);
  }
  const sorted = (m: Map<string, Set<string>>) => new Map([...m].map(([k, v]) => [k, [...v].sort()] as const));
  return { domain: sorted(domain), range: sorted(range), file };
}
