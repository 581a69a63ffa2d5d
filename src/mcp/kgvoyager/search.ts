/** KGVoyager's search tools: search_all_classes and search_all_properties (paper section 3.1). */
import { type KgVoyagerCore, type ToolAnswer, DEFAULT_PAGE, endpointList, short } from './core.js';
import type { PageArgs } from '../paging.js';
import type { Annotation, ClassEntry, PropertyEntry } from './schema-index.js';
import { counted } from '../../common/strings.js';

/** The endpoints of a hit with their counts; one endpoint alone without its count (the hit's total). */
const heldAt = (eps: ClassEntry['endpoints']) => (eps.length === 1 ? `<${eps[0].url}>` : endpointList(eps));

/** What follows a class hit's IRI: instances and the endpoints that hold them. */
export const classDetail = (e: ClassEntry, _name?: (iri: string) => string) => `${counted(e.total, 'instance')}: ${heldAt(e.endpoints)}`;

/** What follows a property hit's IRI: triples per endpoint, domains and ranges (IRIs written by `name`; `(rdfs)` marks those stated by rdfs:domain/range, the others are the VoID's). */
export function propertyDetail(e: PropertyEntry, name: (iri: string) => string = short): string {
  const ann = (xs: Annotation[]) =>
    xs
      .slice(0, 5)
      .map((a) => (a.source === 'rdfs' ? `${name(a.iri)} (rdfs)` : name(a.iri)))
      .join(', ');
  const dr = [e.domains.length ? ` domain ${ann(e.domains)}` : '', e.ranges.length ? ` range ${ann(e.ranges)}` : ''].filter(Boolean).join(';');
  return `${counted(e.total, 'triple')}: ${heldAt(e.endpoints)}${dr ? `;${dr}` : ''}`;
}

/** The answer when no class matches. */
export const NO_CLASS = 'No class matches. Try a shorter or more general term, or search_all_properties.';
/** The answer when no property matches. */
export const NO_PROPERTY = 'No property matches. Try a shorter or more general term.';

/**
 * search_all_classes: classes whose IRI words or labels match a term, with instance counts per
 * endpoint (paper section 3.1, "Class Search"); one page of the hits.
 */
export async function searchAllClasses(kgv: KgVoyagerCore, term: string, page: PageArgs = DEFAULT_PAGE): Promise<ToolAnswer> {
  return kgv.searchTool('classes', term, (r) => kgv.classIndex(r), classDetail, NO_CLASS, page);
}

/**
 * search_all_properties: properties whose IRI words or labels match a term, with triple counts
 * per endpoint and domains/ranges where the data (rdfs:domain, rdfs:range) or the VoID has them
 * (paper section 3.1, "Property Search"); one page of the hits.
 */
export async function searchAllProperties(kgv: KgVoyagerCore, term: string, page: PageArgs = DEFAULT_PAGE): Promise<ToolAnswer> {
  return kgv.searchTool('properties', term, (r) => kgv.propertyIndex(r), propertyDetail, NO_PROPERTY, page);
}
