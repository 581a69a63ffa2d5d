/**
 * The SPARQL 1.1 aggregate queries that compute VoID statistics, SPORTAL-style (Hasnain et al.,
 * 2016/2018: VoID computed by the endpoint itself with SPARQL 1.1 queries).
 *
 * Every query runs over a dataset in which each shard of one knowledge graph is a named graph,
 * named by the shard's dataset IRI (`shardDatasetIri`). The shards are listed in a VALUES clause,
 * so the same text is correct on a store that holds only this graph's shards and on an endpoint
 * that holds every shard of a build. Counts use DISTINCT where VoID counts distinct things; a
 * shard is a set of triples (the build removed duplicates), so COUNT(*) over `?s ?p ?o` in one
 * named graph counts triples exactly.
 *
 * Class membership is kept together with where it is stated: the typing subquery binds the
 * subject, its class and the shard ?tg (?tg2 for objects) that holds the `rdf:type` triple. Rows
 * whose ?tg is the described shard ?g make its class partitions (`ASK { ?s a C }` is true at its
 * endpoint); rows with another ?tg make its remote class partitions, which name ?tg.
 */

const RDF_TYPE = '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>';

/** ` VALUES ?v { <a> <b> } ` over the shard graph IRIs. */
function values(variable: string, graphs: string[]): string {
  return `VALUES ?${variable} { ${graphs.map((g) => `<${g}>`).join(' ')} }`;
}

/** A subquery binding ?s to every instance of ?c in the knowledge graph, with ?tg the shard holding the type triple. */
function typing(graphs: string[], s = 's', c = 'c', g = 'tg'): string {
  return `{ SELECT DISTINCT ?${s} ?${c} ?${g} WHERE { ${values(g, graphs)} GRAPH ?${g} { ?${s} ${RDF_TYPE} ?${c} } } }`;
}

/**
 * Per shard: `void:triples` (COUNT(*)), `void:distinctSubjects`, `void:distinctObjects` (literals
 * included), `void:properties` (distinct predicates).
 * Columns: ?g ?triples ?subjects ?objects ?properties.
 */
export function datasetQuery(graphs: string[]): string {
  return `SELECT ?g (COUNT(*) AS ?triples) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects) (COUNT(DISTINCT ?p) AS ?properties)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o } }
GROUP BY ?g`;
}

/**
 * Per shard: `void:entities` (distinct IRI subjects) and the code-point least and greatest of them
 * (?lo, ?hi), whose longest common prefix is the longest common prefix of all of them (used for
 * `void:uriSpace`). Columns: ?g ?entities ?lo ?hi.
 */
export function entitiesQuery(graphs: string[]): string {
  return `SELECT ?g (COUNT(DISTINCT ?s) AS ?entities) (MIN(STR(?s)) AS ?lo) (MAX(STR(?s)) AS ?hi)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o FILTER(isIRI(?s)) } }
GROUP BY ?g`;
}

/**
 * Per shard: `void:classes`, the distinct objects of the shard's own rdf:type triples (the VoID
 * definition). Shards without type triples have no row. Columns: ?g ?classes.
 */
export function classesQuery(graphs: string[]): string {
  return `SELECT ?g (COUNT(DISTINCT ?c) AS ?classes)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ${RDF_TYPE} ?c } }
GROUP BY ?g`;
}

/**
 * Per shard and predicate: the property partition's `void:triples`, `void:distinctSubjects`,
 * `void:distinctObjects`. Columns: ?g ?p ?triples ?subjects ?objects.
 */
export function propertyPartitionQuery(graphs: string[]): string {
  return `SELECT ?g ?p (COUNT(*) AS ?triples) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o } }
GROUP BY ?g ?p`;
}

/**
 * Per shard, class and shard of the type triples (?tg): the (remote) class partition's
 * `void:entities`, the distinct subjects of the shard typed with the class in ?tg.
 * Columns: ?g ?tg ?c ?entities.
 */
export function classPartitionQuery(graphs: string[]): string {
  return `SELECT ?g ?tg ?c (COUNT(DISTINCT ?s) AS ?entities)
WHERE { { SELECT DISTINCT ?g ?s WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o } } } ${typing(graphs)} }
GROUP BY ?g ?tg ?c`;
}

/**
 * Per shard, class, shard of the type triples (?tg) and predicate: the triples of the shard whose
 * subject is typed with the class in ?tg (the property partitions nested in a class partition).
 * Columns: ?g ?tg ?c ?p ?triples.
 */
export function classPropertyQuery(graphs: string[]): string {
  return `SELECT ?g ?tg ?c ?p (COUNT(*) AS ?triples)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o } ${typing(graphs)} }
GROUP BY ?g ?tg ?c ?p`;
}

/**
 * Per shard, subject class (typed in ?tg), predicate and object class (typed in ?tg2): triples
 * whose object is an instance of the object class (literals, which have no class, are filtered
 * out first: half the time on wta_1). Columns: ?g ?tg ?c ?p ?tg2 ?oc ?triples.
 */
export function objectClassQuery(graphs: string[]): string {
  return `SELECT ?g ?tg ?c ?p ?tg2 ?oc (COUNT(*) AS ?triples)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o FILTER(!isLiteral(?o)) } ${typing(graphs)} ${typing(graphs, 'o', 'oc', 'tg2')} }
GROUP BY ?g ?tg ?c ?p ?tg2 ?oc`;
}

/**
 * Per shard, subject class (typed in ?tg), predicate and datatype: triples whose object is a
 * literal of that datatype (`rdf:langString` for language-tagged literals, `xsd:string` for simple
 * ones). Columns: ?g ?tg ?c ?p ?dt ?triples.
 */
export function datatypeQuery(graphs: string[]): string {
  return `SELECT ?g ?tg ?c ?p ?dt (COUNT(*) AS ?triples)
WHERE { ${values('g', graphs)} GRAPH ?g { ?s ?p ?o FILTER(isLiteral(?o)) } ${typing(graphs)} BIND(DATATYPE(?o) AS ?dt) }
GROUP BY ?g ?tg ?c ?p ?dt`;
}

/**
 * Linksets between shards of one knowledge graph: for every ordered pair of different shards
 * (?a, ?b) and predicate ?p, the triples of ?a whose object is an IRI that is a subject in ?b.
 * A triple whose object is described in several other shards is in one linkset per such shard.
 * Columns: ?a ?b ?p ?triples.
 */
export function linksetQuery(graphs: string[]): string {
  return `SELECT ?a ?b ?p (COUNT(*) AS ?triples)
WHERE {
  ${values('a', graphs)} GRAPH ?a { ?s ?p ?o FILTER(isIRI(?o)) }
  { SELECT DISTINCT ?b ?o WHERE { ${values('b', graphs)} GRAPH ?b { ?o ?q ?x } } }
  FILTER(?a != ?b)
}
GROUP BY ?a ?b ?p`;
}
