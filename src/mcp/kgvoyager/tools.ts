/**
 * The KGVoyager tools (Wisam & Li, "KGVoyager: Knowledge Graph Agnostic Question Answering via
 * Agentic Navigation", section 3) over a federation of SPARQL endpoints: search_all_classes,
 * search_all_properties, lookup_class_instances, explore_property_usage and
 * explore_entity_relations, as plain library functions on one `KgVoyager` object per registry.
 * Every answer is text for an LLM, bounded in rows (one page: "rows 1–20 of 45; pass offset=20 to
 * continue") and time, and names the endpoints that hold what it shows — in a federation that is
 * source selection, which the single-endpoint tools of the paper do not need.
 *
 * By family: search.ts (the two searches), instances.ts (instance lookup), explore.ts (property
 * usage, entity relations); core.ts holds the indexes and what they share; scope.ts keeps several
 * knowledge graphs apart (one `KgVoyager` per graph).
 */
import type { PageArgs } from '../paging.js';
import { KgVoyagerCore, type ToolAnswer } from './core.js';
import { exploreEntityRelations, explorePropertyUsage } from './explore.js';
import { lookupClassInstances } from './instances.js';
import { searchAllClasses, searchAllProperties } from './search.js';

/** Arguments of lookup_class_instances. */
export interface LookupArgs {
  class: string;
  exact_term?: string;
  fallback_term?: string;
  all_attributes?: boolean;
}

/**
 * The five tools as the MCP registration calls them: `KgVoyager` (one scope: all endpoints) or
 * `GraphScopedKgVoyager` (scope.ts: one scope per knowledge graph).
 */
export interface ExplorationTools {
  /** The knowledge graphs a call may name (`graph` argument); empty or one: the tools take none. */
  readonly graphs: readonly string[];
  searchAllClasses(term: string, page?: PageArgs, graph?: string): Promise<ToolAnswer>;
  searchAllProperties(term: string, page?: PageArgs, graph?: string): Promise<ToolAnswer>;
  lookupClassInstances(args: LookupArgs, page?: PageArgs, graph?: string): Promise<ToolAnswer>;
  explorePropertyUsage(args: { property: string }, page?: PageArgs, graph?: string): Promise<ToolAnswer>;
  exploreEntityRelations(args: { entity?: string; literal?: string }, page?: PageArgs, graph?: string): Promise<ToolAnswer>;
}

/**
 * The KGVoyager tools over one endpoint registry, as one scope (entries merged by IRI over all
 * endpoints). The class and property indexes are built on first use (one query per endpoint each)
 * and kept in memory; endpoints that failed are asked again at the next search.
 */
export class KgVoyager extends KgVoyagerCore implements ExplorationTools {
  readonly graphs: readonly string[] = [];

  /** search_all_classes (search.ts). */
  searchAllClasses(term: string, page?: PageArgs): Promise<ToolAnswer> {
    return searchAllClasses(this, term, page);
  }

  /** search_all_properties (search.ts). */
  searchAllProperties(term: string, page?: PageArgs): Promise<ToolAnswer> {
    return searchAllProperties(this, term, page);
  }

  /** lookup_class_instances (instances.ts). */
  lookupClassInstances(args: LookupArgs, page?: PageArgs): Promise<ToolAnswer> {
    return lookupClassInstances(this, args, page);
  }

  /** explore_property_usage (explore.ts). */
  explorePropertyUsage(args: { property: string }, page?: PageArgs): Promise<ToolAnswer> {
    return explorePropertyUsage(this, args, page);
  }

  /** explore_entity_relations (explore.ts). */
  exploreEntityRelations(args: { entity?: string; literal?: string }, page?: PageArgs): Promise<ToolAnswer> {
    return exploreEntityRelations(this, args, page);
  }
}
