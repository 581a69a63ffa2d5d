/**
 * The service description of a shard endpoint (SPARQL 1.1 Service Description, W3C 2013), served
 * on a GET without a query: federation engines probe for it before querying (Comunica sends such a probe before its first query).
 */
import type * as RDF from '@rdfjs/types';
import { DataFactory, Writer } from 'n3';
import { DCTERMS, RDF_TYPE, SD, VOID } from '../common/vocab.js';
import { MEDIA } from '../sparql/protocol.js';

const FORMATS = 'http://www.w3.org/ns/formats/';
const RDFS_SEE_ALSO = 'http://www.w3.org/2000/01/rdf-schema#seeAlso';

/** What the service description says about one endpoint. */
interface ServiceDescriptionInput {
  /** The endpoint URL (`sd:endpoint`, also the IRI of the `sd:Service`). */
  url: string;
  /** A human-readable title, e.g. `world_1-shard2: shard 2 of graph world_1`. */
  title: string;
  /** Triples in the endpoint's default graph. */
  triples: number;
  /** URL of the endpoint's VoID description, when there is one (linked with rdfs:seeAlso). */
  voidUrl?: string;
}

/** Result formats every endpoint produces, as W3C format IRIs (https://www.w3.org/ns/formats/). */
const RESULT_FORMATS = ['SPARQL_Results_JSON', 'SPARQL_Results_XML', 'SPARQL_Results_CSV', 'SPARQL_Results_TSV', 'Turtle', 'N-Triples', 'RDF_XML'];

/**
 * Writes the service description: an `sd:Service` with `sd:endpoint`, `sd:supportedLanguage
 * sd:SPARQL11Query` (no update: the endpoints are read-only; no `sd:BasicFederatedQuery`: they do
 * not evaluate SERVICE), `sd:resultFormat`s, `dcterms:title`, an `sd:defaultDataset` whose
 * default graph states its `void:triples`, and `rdfs:seeAlso` links to the VoID when it exists.
 * @param format MEDIA.turtle or MEDIA.ntriples
 */
export function serviceDescription(input: ServiceDescriptionInput, format: string): Promise<string> {
  const { namedNode, literal, quad } = DataFactory;
  const s = namedNode(input.url);
  const dataset = namedNode(`${input.url}#dataset`);
  const graph = namedNode(`${input.url}#default-graph`);
  const xsdInteger = namedNode('http://www.w3.org/2001/XMLSchema#integer');
  const t = (subj: RDF.NamedNode, p: string, o: RDF.NamedNode | RDF.Literal) => quad(subj, namedNode(p), o);
  const quads = [
    t(s, RDF_TYPE, namedNode(`${SD}Service`)),
    t(s, `${SD}endpoint`, s),
    t(s, `${SD}supportedLanguage`, namedNode(`${SD}SPARQL11Query`)),
    ...RESULT_FORMATS.map((f) => t(s, `${SD}resultFormat`, namedNode(`${FORMATS}${f}`))),
    t(s, `${DCTERMS}title`, literal(input.title)),
    t(s, `${SD}defaultDataset`, dataset),
    t(dataset, RDF_TYPE, namedNode(`${SD}Dataset`)),
    t(dataset, `${SD}defaultGraph`, graph),
    t(graph, RDF_TYPE, namedNode(`${SD}Graph`)),
    t(graph, `${VOID}triples`, literal(String(input.triples), xsdInteger)),
    ...(input.voidUrl ? [t(s, RDFS_SEE_ALSO, namedNode(input.voidUrl)), t(dataset, RDFS_SEE_ALSO, namedNode(input.voidUrl))] : []),
  ];
  const writer = new Writer(
    format === MEDIA.ntriples ? { format: 'N-Triples' } : { format: 'Turtle', prefixes: { sd: SD, void: VOID, dcterms: DCTERMS, formats: FORMATS, rdfs: 'http://www.w3.org/2000/01/rdf-schema#' } },
  );
  writer.addQuads(quads);
  return new Promise((resolve, reject) => writer.end((e, text) => (e ? reject(e) : resolve(text))));
}
