/**
 * The KGVoyager tools (Wisam & Li, "KGVoyager: Knowledge Graph Agnostic Question Answering via
 * Agentic Navigation", section 3) over a federation of SPARQL endpoints: search_all_classes,
 * search_all_properties, lookup_class_instances, explore_property_usage and
 * explore_entity_relations, as plain library functions on one `KgVoyager` object per registry.
 * Every answer is text for an LLM, bounded in rows ("showing N of M") and time, and names the
 * endpoints that hold what it shows — in a federation that is source selection, which the
 * single-endpoint tools of the paper do not need.
 *
 * By family: search.ts (the two searches), instances.ts (instance lookup), explore.ts (property
 * usage, entity relations); core.ts holds the indexes and what they share.
 */
import { KgVoyagerCore, type ToolAnswer } from './core.js';
import { exploreEntityRelations, explorePropertyUsage } from './explore.js';
import { lookupClassInstances } from './instances.js';
import { searchAllClasses, searchAllProperties } from './search.js';

/**
 * The KGVoyager tools over one endpoint registry. The class and property indexes are built on
 * first use (one query per endpoint each) and kept in memory; endpoints that failed are asked again
 * at the next search.
 */
export class KgVoyager extends KgVoyagerCore {
  /** search_all_classes (search.ts). */
  searchAllClasses(term: string): Promise<ToolAnswer> {
    return searchAllClasses(this, term);
  }

  /** search_all_properties (search.ts). */
  searchAllProperties(term: string): Promise<ToolAnswer> {
    return searchAllProperties(this, term);
  }

  /** lookup_class_instances (instances.ts). */
  lookupClassInstances(args: { class: string; exact_term?: string; fallback_term?: string; all_attributes?: boolean }): Promise<ToolAnswer> {
    return lookupClassInstances(this, args);
  }

  /** explore_property_usage (explore.ts). */
  explorePropertyUsage(args: { property: string }): Promise<ToolAnswer> {
    return explorePropertyUsage(this, args);
  }

  /** explore_entity_relations (explore.ts). */
  exploreEntityRelations(args: { entity?: string; literal?: string }): Promise<ToolAnswer> {
    return exploreEntityRelations(this, args);
  }
}
