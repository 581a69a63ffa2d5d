/**
 * The information surface of `fkgqa mcp`: every text an agent can see besides tool answers — the
 * server's instructions, the tool descriptions, the endpoint resource and the prompt — as each
 * setup of the FKGQA paper (section 5; docs/mcp.md lists what each gives) gives it.
 *
 * The endpoint list is in run_sparql_query's description, which every MCP client shows to its
 * model (some drop server instructions, few read resources unasked); the instructions and the
 * resource `fkgqa://endpoints` say the same. Catalogue descriptions exist only in the high_level
 * context (`createMcpContext` drops them from the registry of every other setup), so no other
 * setup can show them by any path.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { McpToolContext } from './context.js';
import { counted } from '../common/strings.js';

/** The prompts shipped with fkgqa (`prompts/<setup>.md`, the texts `fkgqa eval` gives an agent). */
export const DEFAULT_PROMPTS_DIR = fileURLToPath(new URL('../../prompts', import.meta.url));

/** The IRI of the endpoint list resource. */
export const ENDPOINTS_RESOURCE = 'fkgqa://endpoints';

/** The name of the MCP prompt of a setup. */
export const PROMPT_NAME = 'answer_question';

/** Where the endpoint list is, for messages that do not repeat it. */
export const ENDPOINTS_ELSEWHERE = 'the description of run_sparql_query (and the resource fkgqa://endpoints)';

/** The endpoints as the setup shows them (descriptions only in high_level: the context holds none otherwise). */
export function endpointList(ctx: McpToolContext, graph?: string): { id: string; url: string; graph: string | null; description?: string }[] {
  return ctx.registry.endpoints
    .filter((e) => graph === undefined || e.graph === graph)
    .map((e) => ({ id: e.id, url: e.url, graph: e.graph, ...(ctx.setup === 'high_level' && e.description ? { description: e.description } : {}) }));
}

/**
 * The endpoint list as lines, `- <url>` (high_level: `- <url> — <description>`, as `fkgqa eval`
 * writes it into its prompts), under a heading per knowledge graph when there are several.
 * @param graph only this graph's endpoints
 */
function endpointLines(ctx: McpToolContext, graph?: string): string {
  const eps = endpointList(ctx, graph);
  const line = (e: { url: string; description?: string }) => `- ${e.url}${e.description ? ` — ${e.description}` : ''}`;
  const graphs = [...new Set(eps.map((e) => e.graph))];
  if (graphs.length <= 1) return eps.map(line).join('\n');
  return graphs.map((g) => [g === null ? 'Other endpoints:' : `Knowledge graph ${g}:`, ...eps.filter((e) => e.graph === g).map(line)].join('\n')).join('\n');
}

/** "N SPARQL endpoints of the knowledge graph g" / "of K knowledge graphs (a, b, …)". */
function whatIsServed(ctx: McpToolContext): string {
  const n = ctx.registry.endpoints.length;
  const eps = `${n} SPARQL endpoint${n === 1 ? '' : 's'}`;
  if (ctx.graphs.length === 0) return eps;
  if (ctx.graphs.length === 1) return `${eps} of the knowledge graph ${ctx.graphs[0]}`;
  return `${eps} of ${ctx.graphs.length} knowledge graphs (${ctx.graphs.join(', ')})`;
}

/**
 * The sentence on keeping several graphs apart (or on mixing them), or none for one graph.
 * @param tools mention the exploration tools (when the server has them)
 */
function graphsSentence(ctx: McpToolContext, tools: boolean): string[] {
  if (ctx.graphs.length < 2) return [];
  if (ctx.mixGraphs)
    return [
      'The knowledge graphs reuse IRIs (the same class or property IRI names different data in each); this server lets one query join endpoints of several graphs, so such IRIs join unrelated data.',
    ];
  return [
    `The knowledge graphs reuse IRIs (the same class or property IRI names different data in each), so they are kept apart: a query may name endpoints of one graph only${tools && ctx.kgvoyager ? ', and the exploration tools answer per graph, naming it (give graph to ask one)' : ''}.`,
  ];
}

/** The server's instructions (shown by clients that keep them): the setup, how to name endpoints, where the endpoint list is. */
export function instructions(ctx: McpToolContext): string {
  const described = ctx.setup === 'high_level' ? ', each with a one-sentence description of what it holds,' : '';
  const lines = [
    `fkgqa SPARQL-MCP server (setup: ${ctx.setup}): ${whatIsServed(ctx)}. They are listed${described} in the description of run_sparql_query and in the resource ${ENDPOINTS_RESOURCE}.`,
    'Answer questions by querying the endpoints with run_sparql_query. Every query must name the endpoints it uses with SERVICE <endpoint URL> { … }:',
    'a query whose whole WHERE clause is one SERVICE clause is sent to that endpoint directly; a query with several SERVICE clauses is evaluated by the federation engine, which joins the parts.',
    'The data of one knowledge graph is split over several endpoints, so a question may need more than one.',
    ...graphsSentence(ctx, true),
  ];
  if (ctx.setup === 'void_tool') lines.push('get_void_descriptions returns the VoID description of endpoints (classes, properties and their counts): use it to find which endpoint holds what.');
  if (ctx.kgvoyager) {
    lines.push(
      'search_all_classes and search_all_properties find classes and properties by a term and list the endpoints that hold them (use those in SERVICE clauses); ' +
        'lookup_class_instances finds instances of a class, explore_property_usage shows the classes a property connects, explore_entity_relations the neighbourhood of an entity or a literal; ' +
        'execute_query is run_sparql_query.',
    );
  }
  lines.push('Long answers come in pages: pass offset (and max_chars) to see more.');
  if (promptFile(ctx)) lines.push(`The prompt ${PROMPT_NAME} holds the instructions fkgqa eval gives an agent in this setup.`);
  return lines.join('\n');
}

/** The description of run_sparql_query: what it does, its bounds and paging, and the endpoint list of the setup. */
export function runQueryDescription(ctx: McpToolContext): string {
  const l = ctx.limits;
  const heading = ctx.setup === 'high_level' ? 'Endpoints, each with a one-sentence description of what it holds:' : 'Endpoints:';
  return [
    'Runs a read-only SPARQL 1.1 query over the endpoints listed below. Name every endpoint with SERVICE <endpoint URL> { … }: ' +
      'one SERVICE clause that is the whole WHERE goes straight to that endpoint; several SERVICE clauses are joined by the federation engine. ' +
      `Declare every prefix you use; queries up to ${l.maxQueryChars} characters. ` +
      `An answer shows one page of at most ${counted(l.previewRows, 'row')} and max_chars characters ("rows 1–${l.previewRows} of 2345; pass offset=${l.previewRows} to continue").`,
    ...graphsSentence(ctx, false),
    heading,
    endpointLines(ctx),
  ].join('\n');
}

/** The JSON of the resource `fkgqa://endpoints`. */
export function endpointsResource(ctx: McpToolContext): { setup: string; graphs: string[]; endpoints: ReturnType<typeof endpointList> } {
  return { setup: ctx.setup, graphs: ctx.graphs, endpoints: endpointList(ctx) };
}

/** The prompt file of the context's setup, or null when there is none. */
export function promptFile(ctx: McpToolContext): string | null {
  if (!ctx.promptsDir) return null;
  const f = path.join(ctx.promptsDir, `${ctx.setup}.md`);
  return fs.existsSync(f) ? f : null;
}

/**
 * The text of the prompt `answer_question`: the setup's prompt file as `fkgqa eval` uses it, read
 * now (its `{{endpoints}}` filled with `endpointLines`, `{{question}}` with the question or the
 * question appended), and for the shipped prompts a last line on how to end: with the final query
 * in the answer (the prompt files name only the server's tools; `fkgqa eval` appends the words on
 * its own tools).
 * @param graph only this graph's endpoints
 * @throws Error when the file cannot be read
 */
export function promptText(ctx: McpToolContext, args: { question?: string; graph?: string }): string {
  const file = promptFile(ctx);
  if (!file) throw new Error(`no prompt file for setup ${ctx.setup}`);
  let text = fs.readFileSync(file, 'utf8').trimEnd().replace('{{endpoints}}', endpointLines(ctx, args.graph));
  const q = args.question?.trim();
  if (text.includes('{{question}}')) text = text.replace('{{question}}', q ?? '');
  else if (q) text += `\n\nQuestion: ${q}`;
  // The shipped prompts end at the query to write; a prompts folder of one's own is served as written.
  if (ctx.promptsDir === DEFAULT_PROMPTS_DIR) text += '\n\nEnd with the final SPARQL query (or why the question cannot be answered) in your answer.';
  return text;
}
