/**
 * Registers the KGVoyager tools on an MCP server (`@modelcontextprotocol/server` 2.4.0). Tool
 * names and arguments are the paper's (section 3 and its appendix G): search_all_classes {term},
 * search_all_properties {term}, lookup_class_instances {class, exact_term?, fallback_term?,
 * all_attributes?}, explore_property_usage {property}, explore_entity_relations {entity | literal},
 * and execute_query, which is run_sparql_query of `fkgqa mcp` under the paper's name.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { ExplorationTools } from './tools.js';
import { type ToolAnswer } from './core.js';
import { pageArgs, type CharBounds } from '../paging.js';
import { textResult, type ToolErrorMeta } from '../tool-error.js';

/** One tool call, for the caller's call log. */
export interface KgVoyagerCall {
  tool: string;
  /** The arguments as the agent sent them. */
  args: Record<string, unknown>;
  /** SPARQL requests sent per endpoint URL. */
  requests: Record<string, number>;
  /** Wall-clock time, in ms. */
  ms: number;
  /** The answer was an error, or the call threw (`error` is the message). */
  error?: string;
  /** The error's class and whether the infrastructure caused it (`_meta["fkgqa/error"]`). */
  errorClass?: string;
  infrastructure?: boolean;
}

/** What `registerKgVoyagerToolsOn` needs beyond the tools themselves. */
interface KgVoyagerRegistration {
  /** Called after every tool call (e.g. to append to the server's call log). */
  log?: (call: KgVoyagerCall) => void;
  /**
   * Runs a SPARQL query for execute_query (run_sparql_query's handler, with its arguments
   * `{query, format?, timeout_ms?}`). Without it execute_query is not registered.
   */
  executeQuery?: (args: { query: string; format?: string; timeout_ms?: number; offset?: number; max_chars?: number }) => Promise<{ text: string; isError: boolean; error?: ToolErrorMeta }>;
  /** Bounds of `max_chars` (default 1,000..200,000, default 20,000). */
  pageBounds?: CharBounds;
  /** The argument bounds of execute_query, as run_sparql_query declares them (default: any format string, any integer timeout). */
  executeQueryBounds?: { formats: readonly [string, ...string[]]; minTimeoutMs: number; maxTimeoutMs: number; defaultTimeoutMs: number };
}

const iriArg = (what: string) => z.string().min(1).describe(`${what} IRI, without angle brackets (angle brackets are accepted)`);

/** The default bounds of `max_chars`. */
const PAGE_BOUNDS: CharBounds = { defaultMaxChars: 20_000, minMaxChars: 1000, maxMaxChars: 200_000 };

/** The paging and graph arguments every KGVoyager tool takes. */
type Paged = { offset?: number; max_chars?: number; graph?: string };

/** A tool's handler as the SDK calls it, with the arguments it checked against the tool's input schema. */
type ToolHandler = (args: Record<string, unknown>) => Promise<ReturnType<typeof textResult>>;

/** What the tools of every family share (`toolParts`): the handler wrapper, the annotations, the argument schemas and the words for "all endpoints". */
interface ToolParts {
  /** The handler of a tool: runs it, turns an exception into an `internal` error answer, logs the call. */
  wrap: <A>(tool: string, run: (args: A) => Promise<ToolAnswer>) => ToolHandler;
  readOnly: { readOnlyHint: boolean; openWorldHint: boolean };
  /** The `graph` argument, with several graphs only. */
  graph: Record<string, z.ZodType>;
  /** The `offset` and `max_chars` arguments. */
  paging: { offset: z.ZodOptional<z.ZodNumber>; max_chars: z.ZodOptional<z.ZodNumber> };
  /** The page a call asks for. */
  page: (a: Paged) => ReturnType<typeof pageArgs>;
  /** "all endpoints", naming the graph of each hit with several graphs. */
  all: string;
}

/** The parts every tool shares, for these tools and this registration. */
function toolParts(kgv: ExplorationTools, registration: KgVoyagerRegistration): ToolParts {
  const bounds = registration.pageBounds ?? PAGE_BOUNDS;
  // The arguments were checked by the SDK against the tool's input schema (whose `graph` key exists only with several graphs).
  const wrap = <A>(tool: string, run: (args: A) => Promise<ToolAnswer>): ToolHandler => {
    return async (args: Record<string, unknown>) => {
      const t0 = performance.now();
      let answer: ToolAnswer;
      try {
        answer = await run(args as A);
      } catch (e) {
        answer = { text: `Error (internal): ${tool} failed: ${(e as Error).message ?? e}`, isError: true, requests: {}, error: { class: 'internal', infrastructure: true } };
      }
      registration.log?.({
        tool,
        args,
        requests: answer.requests,
        ms: performance.now() - t0,
        ...(answer.isError ? { error: answer.text, errorClass: answer.error?.class ?? 'kgvoyager', infrastructure: answer.error?.infrastructure ?? false } : {}),
      });
      return textResult(answer.text, answer.isError ? (answer.error ?? { class: 'kgvoyager', infrastructure: false }) : undefined);
    };
  };
  const several = kgv.graphs.length > 1;
  return {
    wrap,
    readOnly: { readOnlyHint: true, openWorldHint: true },
    graph: several
      ? {
          graph: z
            .enum(kgv.graphs as [string, ...string[]])
            .optional()
            .describe('the knowledge graph to ask (default: every graph, each answer naming its graph; graphs reuse IRIs)'),
        }
      : {},
    paging: {
      offset: z.number().int().min(0).optional().describe('items of the list to skip: the next page starts at the offset the previous answer names (default 0)'),
      max_chars: z.number().int().min(bounds.minMaxChars).max(bounds.maxMaxChars).optional().describe(`characters of the answer (default ${bounds.defaultMaxChars})`),
    },
    page: (a: Paged) => pageArgs(a, bounds),
    all: several ? 'all endpoints, each hit naming its knowledge graph' : 'all endpoints',
  };
}

/** Registers the search tools: search_all_classes and search_all_properties. */
function registerSearchTools(server: McpServer, kgv: ExplorationTools, t: ToolParts): void {
  const { wrap, readOnly, graph, paging, page, all } = t;
  server.registerTool(
    'search_all_classes',
    {
      description:
        `Search the classes of ${all} by a natural-language term (hybrid BM25 + dense retrieval over class IRIs and labels). ` +
        'Returns ranked class IRIs with instance counts and the endpoints (SPARQL URLs) that hold instances of each: use those endpoints in SERVICE clauses.',
      inputSchema: z.object({ term: z.string().describe('a word or short phrase, e.g. "singer" or "concert"'), ...graph, ...paging }),
      annotations: readOnly,
    },
    wrap('search_all_classes', (a: { term: string } & Paged) => kgv.searchAllClasses(a.term, page(a), a.graph)),
  );
  server.registerTool(
    'search_all_properties',
    {
      description:
        `Search the properties (predicates) of ${all} by a natural-language term. Returns ranked property IRIs with triple counts per endpoint, ` +
        'and domains/ranges where the data or the VoID has them.',
      inputSchema: z.object({ term: z.string().describe('a word or short phrase, e.g. "name" or "release year"'), ...graph, ...paging }),
      annotations: readOnly,
    },
    wrap('search_all_properties', (a: { term: string } & Paged) => kgv.searchAllProperties(a.term, page(a), a.graph)),
  );
}

/** Registers the instance tool: lookup_class_instances. */
function registerInstanceTools(server: McpServer, kgv: ExplorationTools, t: ToolParts): void {
  const { wrap, readOnly, graph, paging, page } = t;
  server.registerTool(
    'lookup_class_instances',
    {
      description:
        'List instances of a class (from search_all_classes), optionally only those whose IRI or rdfs:label contains exact_term (case-insensitive). ' +
        'all_attributes: match any literal value of the instances instead (slower; use it when names are stored in attributes). ' +
        'fallback_term: a broader term tried when exact_term finds nothing; its matches are ranked by similarity to exact_term.',
      inputSchema: z.object({
        class: iriArg('the class'),
        exact_term: z.string().optional().describe('text the instance IRI, label (or, with all_attributes, any value) contains'),
        fallback_term: z.string().optional().describe('a broader text, used when exact_term matches nothing'),
        all_attributes: z.boolean().optional().describe('match all literal values of the instances, not only labels and IRIs'),
        ...graph,
        ...paging,
      }),
      annotations: readOnly,
    },
    wrap('lookup_class_instances', (a: { class: string; exact_term?: string; fallback_term?: string; all_attributes?: boolean } & Paged) =>
      kgv.lookupClassInstances({ class: a.class, exact_term: a.exact_term, fallback_term: a.fallback_term, all_attributes: a.all_attributes }, page(a), a.graph),
    ),
  );
}

/** Registers the exploration tools: explore_property_usage and explore_entity_relations. */
function registerExploreTools(server: McpServer, kgv: ExplorationTools, t: ToolParts): void {
  const { wrap, readOnly, graph, paging, page } = t;
  server.registerTool(
    'explore_property_usage',
    {
      description:
        'Show how a property is used: the endpoints holding it, the classes of its subjects and the classes or datatypes of its objects, with triple counts and example triples. ' +
        'Subjects typed at another endpoint of the same graph are looked up there.',
      inputSchema: z.object({ property: iriArg('the property'), ...graph, ...paging }),
      annotations: readOnly,
    },
    wrap('explore_property_usage', (a: { property: string } & Paged) => kgv.explorePropertyUsage({ property: a.property }, page(a), a.graph)),
  );
  server.registerTool(
    'explore_entity_relations',
    {
      description:
        'Show the neighbourhood of an entity: its outgoing and incoming properties at every endpoint, with counts and examples. ' +
        'Give a literal instead of an entity to find the entities that have that value (whole value, case-insensitive) and the properties holding it.',
      inputSchema: z.object({
        entity: iriArg('the entity').optional(),
        literal: z.string().optional().describe('a literal value, e.g. "Peru"'),
        ...graph,
        ...paging,
      }),
      annotations: readOnly,
    },
    wrap('explore_entity_relations', (a: { entity?: string; literal?: string } & Paged) =>
      kgv.exploreEntityRelations({ ...(a.entity !== undefined ? { entity: a.entity } : {}), ...(a.literal !== undefined ? { literal: a.literal } : {}) }, page(a), a.graph),
    ),
  );
}

/** Registers execute_query (run_sparql_query under the paper's name), with run_sparql_query's argument bounds when given. */
function registerExecuteQuery(server: McpServer, exec: NonNullable<KgVoyagerRegistration['executeQuery']>, b: KgVoyagerRegistration['executeQueryBounds'], t: ToolParts): void {
  server.registerTool(
    'execute_query',
    {
      description:
        'Run a SPARQL query and return its results (the same tool as run_sparql_query: name endpoints with SERVICE <url> { … }; long answers come in pages, "rows 1–100 of 2345; pass offset=100 to continue").',
      inputSchema: z.object({
        query: z.string().describe('a SPARQL 1.1 query'),
        format: (b ? z.enum(b.formats) : z.string()).optional().describe('result format, as in run_sparql_query'),
        timeout_ms: (b ? z.number().int().min(b.minTimeoutMs).max(b.maxTimeoutMs) : z.number().int())
          .optional()
          .describe(b ? `time limit in ms (default ${b.defaultTimeoutMs})` : 'time limit in ms, as in run_sparql_query'),
        ...t.paging,
      }),
      annotations: t.readOnly,
    },
    t.wrap('execute_query', async (a: { query: string; format?: string; timeout_ms?: number; offset?: number; max_chars?: number }) => {
      const r = await exec(a);
      return { text: r.text, isError: r.isError, requests: {}, ...(r.error ? { error: r.error } : {}) };
    }),
  );
}

/**
 * Registers the tools on a server, family by family (search, instances, explore, then
 * execute_query with `executeQuery`). Answers are one text content item, one page of a list
 * (`offset`, `max_chars`); a failed call (bad arguments, endpoints that all failed, an exception)
 * is an `isError` answer with `_meta["fkgqa/error"]`, and the server stays up. With tools over
 * several knowledge graphs (`tools.graphs`), each tool takes `graph` (one of them).
 */
export function registerKgVoyagerToolsOn(server: McpServer, kgv: ExplorationTools, registration: KgVoyagerRegistration = {}): void {
  const t = toolParts(kgv, registration);
  registerSearchTools(server, kgv, t);
  registerInstanceTools(server, kgv, t);
  registerExploreTools(server, kgv, t);
  if (registration.executeQuery) registerExecuteQuery(server, registration.executeQuery, registration.executeQueryBounds, t);
}
