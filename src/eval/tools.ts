/**
 * Where an agent's tools come from. `McpToolProvider` spawns `fkgqa mcp` over stdio and talks to
 * it with the official MCP client (@modelcontextprotocol/client 2.4.0), so the harness evaluates
 * the server a user would run. `DirectToolProvider` implements run_sparql_query (and
 * get_void_descriptions from the endpoints' `/.well-known/void`) in-process behind the same
 * interface, for when `fkgqa mcp` is not available (`--tools direct`). The harness adds its own
 * two tools, `submit_final_query {query}` and `cancel {reason}` (HARNESS_TOOLS).
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ToolSpec } from './chat.js';
import { QueryExecutor } from './execute.js';

/** A tool's answer as the model sees it. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** A source of tools. */
export interface ToolProvider {
  readonly source: 'mcp' | 'direct';
  /** The command line of the MCP server (mcp only). */
  readonly command?: string[];
  tools(): ToolSpec[];
  call(name: string, args: Record<string, unknown>): Promise<ToolOutcome>;
  close(): Promise<void>;
}

/** The harness's tools (FKGQA paper, section 5: the final query is submitted through `submit_final_query`). */
export const HARNESS_TOOLS: ToolSpec[] = [
  {
    name: 'submit_final_query',
    description: 'Submit your final SPARQL query: the one whose answer answers the question. It ends the task.',
    parameters: { type: 'object', properties: { query: { type: 'string', description: 'The final SPARQL query, with its SERVICE clauses' } }, required: ['query'] },
  },
  {
    name: 'cancel',
    description: 'Give up on the question when it cannot be answered with these endpoints. It ends the task.',
    parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why the question cannot be answered' } }, required: ['reason'] },
  },
];

/** Rows shown to the agent by the direct provider (the reference server's DEFAULT_QUERY_LIMIT is 100). */
export const PREVIEW_ROWS = 50;

/** The endpoint registry the direct provider needs: URL and the URL of its VoID. */
export interface DirectEndpoint {
  url: string;
  void: string | null;
}

/** In-process tools (module comment). */
export class DirectToolProvider implements ToolProvider {
  readonly source = 'direct' as const;
  private readonly executor: QueryExecutor;

  /**
   * @param endpoints the registered endpoints
   * @param withVoid offer get_void_descriptions (setup void_tool)
   * @param timeoutMs default time limit of a query, in ms
   */
  constructor(
    private readonly endpoints: DirectEndpoint[],
    private readonly withVoid: boolean,
    timeoutMs = 30_000,
  ) {
    this.executor = new QueryExecutor(endpoints.map((e) => e.url), timeoutMs);
  }

  tools(): ToolSpec[] {
    const t: ToolSpec[] = [
      {
        name: 'run_sparql_query',
        description: 'Run a SPARQL query. Name the endpoints with SERVICE <url> { … }; one SERVICE goes straight to its endpoint, several go to a federation engine.',
        parameters: {
          type: 'object',
          properties: {
            query: { type: 'string' },
            format: { type: 'string', enum: ['application/sparql-results+json'] },
            timeout_ms: { type: 'integer', minimum: 1000, maximum: 100000 },
          },
          required: ['query'],
        },
      },
    ];
    if (this.withVoid) {
      t.push({
        name: 'get_void_descriptions',
        description: 'Get the VoID description (classes, properties, counts) of one endpoint or several.',
        parameters: { type: 'object', properties: { endpoint: { type: 'string' }, endpoints: { type: 'array', items: { type: 'string' } } } },
      });
    }
    return t;
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    if (name === 'run_sparql_query') {
      if (typeof args.query !== 'string') return { text: 'run_sparql_query needs a "query" string', isError: true };
      const t = typeof args.timeout_ms === 'number' ? Math.min(100_000, Math.max(1000, args.timeout_ms)) : undefined;
      const r = await this.executor.run(args.query, t);
      if (r.status !== 'ok') return { text: r.status === 'timeout' ? `timeout: ${r.error}` : `error: ${r.error}`, isError: true };
      const res = r.results!;
      if (res.boolean !== undefined) return { text: JSON.stringify(res), isError: false };
      const rows = res.results?.bindings ?? [];
      const shown = { head: res.head, results: { bindings: rows.slice(0, PREVIEW_ROWS) } };
      return { text: `${JSON.stringify(shown)}\n${rows.length > PREVIEW_ROWS ? `showing ${PREVIEW_ROWS} of ${rows.length} rows` : `${rows.length} rows`}`, isError: false };
    }
    if (name === 'get_void_descriptions' && this.withVoid) {
      const wanted = [...(typeof args.endpoint === 'string' ? [args.endpoint] : []), ...(Array.isArray(args.endpoints) ? args.endpoints.filter((x): x is string => typeof x === 'string') : [])];
      if (wanted.length === 0) return { text: 'get_void_descriptions needs "endpoint" or "endpoints"', isError: true };
      const parts: string[] = [];
      for (const w of wanted) {
        const e = this.endpoints.find((x) => x.url === w);
        if (!e?.void) {
          parts.push(`# ${w}: unknown endpoint or no VoID; known: ${this.endpoints.map((x) => x.url).join(' ')}`);
          continue;
        }
        try {
          const res = await fetch(e.void, { headers: { accept: 'text/turtle' }, signal: AbortSignal.timeout(10_000) });
          parts.push(`# VoID of ${w}\n${await res.text()}`);
        } catch (err) {
          parts.push(`# ${w}: ${(err as Error).message}`);
        }
      }
      return { text: parts.join('\n'), isError: false };
    }
    return { text: `unknown tool ${name}`, isError: true };
  }

  async close(): Promise<void> {
    await this.executor.close();
  }
}

interface McpTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** Tools of a `fkgqa mcp` process over stdio (module comment). */
export class McpToolProvider implements ToolProvider {
  readonly source = 'mcp' as const;
  private list: ToolSpec[] = [];

  private constructor(
    private readonly client: Client,
    readonly command: string[],
  ) {}

  /**
   * Spawns the server and lists its tools.
   * @param command executable and arguments, e.g. `[process.execPath, 'bin/fkgqa.js', 'mcp', …]`
   * @throws Error when the server does not start or does not answer listTools
   */
  static async start(command: string[]): Promise<McpToolProvider> {
    const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'ignore' });
    const client = new Client({ name: 'fkgqa-eval', version: '1' });
    await client.connect(transport);
    const p = new McpToolProvider(client, command);
    const { tools } = (await client.listTools()) as { tools: McpTool[] };
    p.list = tools.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' } }));
    return p;
  }

  tools(): ToolSpec[] {
    return this.list;
  }

  async call(name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
    try {
      const r = (await this.client.callTool({ name, arguments: args })) as { content?: { type: string; text?: string }[]; isError?: boolean };
      const text = (r.content ?? []).map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
      return { text, isError: !!r.isError };
    } catch (e) {
      return { text: `tool call failed: ${(e as Error).message}`, isError: true };
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
