/** KGVoyager's search tools: search_all_classes and search_all_properties (paper section 3.1). */
import { type KgVoyagerCore, type ToolAnswer, endpointList, short, plural } from './core.js';
import type { Annotation } from './schema-index.js';

/**
 * search_all_classes: classes whose IRI words or labels match a term, with instance counts per
 * endpoint (paper section 3.1, "Class Search").
 */
export async function searchAllClasses(kgv: KgVoyagerCore, term: string): Promise<ToolAnswer> {
  return kgv.searchTool(
    'classes',
    term,
    (r) => kgv.classIndex(r),
    (e) => `${plural(e.total, 'instance')} at ${plural(e.endpoints.length, 'endpoint')}: ${endpointList(e.endpoints)}`,
    'No class matches. Try a shorter or more general term, or search_all_properties.',
  );
}

/**
 * search_all_properties: properties whose IRI words or labels match a term, with triple counts
 * per endpoint and domains/ranges where the data (rdfs:domain, rdfs:range) or the VoID has them
 * (paper section 3.1, "Property Search").
 */
export async function searchAllProperties(kgv: KgVoyagerCore, term: string): Promise<ToolAnswer> {
  const ann = (xs: Annotation[]) =>
    xs
      .slice(0, 5)
      .map((a) => (a.source === 'rdfs' ? `${short(a.iri)} (rdfs)` : `${short(a.iri)} (${a.triples} in VoID)`))
      .join(', ');
  return kgv.searchTool(
    'properties',
    term,
    (r) => kgv.propertyIndex(r),
    (e) => {
      const dr = [e.domains.length ? ` domain ${ann(e.domains)}` : '', e.ranges.length ? ` range ${ann(e.ranges)}` : ''].filter(Boolean).join(';');
      return `${plural(e.total, 'triple')} at ${plural(e.endpoints.length, 'endpoint')}: ${endpointList(e.endpoints)}${dr ? `;${dr}` : ''}`;
    },
    'No property matches. Try a shorter or more general term.',
  );
}
