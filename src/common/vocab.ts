/** IRIs of the vocabularies fkgqa reads and writes. */
export const RDF = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
export const RDFS = 'http://www.w3.org/2000/01/rdf-schema#';
export const OWL = 'http://www.w3.org/2002/07/owl#';
export const XSD = 'http://www.w3.org/2001/XMLSchema#';
export const VOID = 'http://rdfs.org/ns/void#';
export const SD = 'http://www.w3.org/ns/sparql-service-description#';
export const DCTERMS = 'http://purl.org/dc/terms/';

export const RDF_TYPE = `${RDF}type`;
export const RDFS_DOMAIN = `${RDFS}domain`;
export const RDFS_RANGE = `${RDFS}range`;

/** The default prefix of Spider4SPARQL gold queries (`:`), which the queries never declare. */
export const SPIDER_DEFAULT_PREFIX = 'http://valuenet/ontop/';

/** Prefix of the IRIs that replace blank nodes (see `skolemIri`). */
export const SKOLEM_PREFIX = 'urn:fkgqa:bnode:';

/** xsd:integer and the types derived from it, by local name (XML Schema 1.1 part 2, section 3.4). */
export const XSD_INTEGER_TYPES: readonly string[] = [
  'integer',
  'int',
  'long',
  'short',
  'byte',
  'nonNegativeInteger',
  'positiveInteger',
  'negativeInteger',
  'nonPositiveInteger',
  'unsignedInt',
  'unsignedLong',
  'unsignedShort',
  'unsignedByte',
];

/** The numeric datatypes, as IRIs (SPARQL 1.1 section 17.1): xsd:decimal, xsd:float, xsd:double and the integer types. */
export const XSD_NUMERIC_TYPES: ReadonlySet<string> = new Set(['decimal', 'float', 'double', ...XSD_INTEGER_TYPES].map((t) => `${XSD}${t}`));
