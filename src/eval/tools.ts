/**
 * Where an agent's tools come from: an MCP server, through the official MCP client
 * (@modelcontextprotocol/client 2.4.0). `McpToolProvider.spawn` starts `fkgqa mcp` over stdio, so
 * the harness evaluates the server a user would run (`--tools mcp`, the default);
 * `McpToolProvider.inProcess` connects to the same server built in this process over an
 * in-memory transport (`--tools in-process`: no process per run, used by the tests of the loop).
 * The harness adds its own two tools, `submit_final_query {query}` and `cancel {reason}`
 * (HARNESS_TOOLS).
 */
import { Client, InMemoryTransport, SdkError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createMcpServer, type McpServerOptions } from '../mcp/server.js';
import type { ToolSpec } from './chat.js';
import type { ToolErrorMeta } from '../mcp/tool-error.js';
import { counted } from '../common/strings.js';

/** A tool's answer as the model sees it, and (outside that text) how an error was classified. */
interface ToolOutcome {
  text: string;
  isError: boolean;
  /** `_meta["fkgqa/error"]` of an error result (contracts.md), or the harness's class `mcp-transport` when the call did not get an answer. */
  error?: ToolErrorMeta;
}

/** What else an MCP server shows besides its tools (listed once, at connection), for the run's tool-surface digest. */
interface ServerSurface {
  instructions: string | null;
  resources: unknown[];
  resourceTemplates: unknown[];
  prompts: unknown[];
}

/** Options of one tool call. */
interface ToolCallOptions {
  /** Aborts the call (the run's time limit). */
  signal?: AbortSignal;
}

/** A source of tools. */
export interface ToolProvider {
  readonly source: 'mcp' | 'in-process';
  /** The command line of the MCP server (stdio only). */
  readonly command?: string[];
  tools(): ToolSpec[];
  surface(): ServerSurface;
  /** Calls a tool; never rejects (a failure is an error outcome). */
  call(name: string, args: Record<string, unknown>, options?: ToolCallOptions): Promise<ToolOutcome>;
  close(): Promise<void>;
}

/**
 * How long the harness waits for one tool call, in ms: the tools bound their own work (a query at
 * most 100,000 ms, the largest `timeout_ms`), so a call without an answer after this is a server
 * that stopped answering (the MCP SDK's default, 60 s, is shorter than a query may take).
 */
const TOOL_CALL_TIMEOUT_MS = 130_000;

/** The classification a tool result carries in `_meta["fkgqa/error"]`, if it is well formed. */
function toolErrorMeta(meta: unknown): ToolErrorMeta | undefined {
  const m = (meta as Record<string, unknown> | undefined)?.['fkgqa/error'] as Record<string, unknown> | undefined;
  if (!m || typeof m !== 'object' || typeof m.class !== 'string' || typeof m.infrastructure !== 'boolean') return undefined;
  return { class: m.class, infrastructure: m.infrastructure, ...(typeof m.endpoint === 'string' ? { endpoint: m.endpoint } : {}) };
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

/**
 * What the harness adds to a setup's prompt (prompts/<setup>.md names only the tools of the setup's
 * MCP server): how its two tools end the task, and the turn limit.
 * @param maxTurns LLM calls per run
 */
export function harnessPromptWords(maxTurns: number): string {
  return [
    'Ending the task:',
    '- submit_final_query submits your final SPARQL query; its full answer is your answer. It ends the task.',
    '- cancel gives up when the question cannot be answered with these endpoints. It ends the task.',
    `Submit the query that answers the question. You have at most ${counted(maxTurns, 'turn')}.`,
  ].join('\n');
}

interface McpTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** Tools of a `fkgqa mcp` process over stdio (module comment). */
export class McpToolProvider implements ToolProvider {
  private list: ToolSpec[] = [];
  private shown: ServerSurface = { instructions: null, resources: [], resourceTemplates: [], prompts: [] };

  private constructor(
    private readonly client: Client,
    readonly source: 'mcp' | 'in-process',
    readonly command: string[] | undefined,
    private readonly onClose: () => Promise<void>,
  ) {}

  private static async connect(client: Client, p: McpToolProvider): Promise<McpToolProvider> {
    const { tools } = (await client.listTools()) as { tools: McpTool[] };
    p.list = tools.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' } }));
    const caps = client.getServerCapabilities() ?? {};
    // Lists the server does not offer are empty; one that fails to list is recorded as such (it changes the digest).
    const list = async (offered: unknown, f: () => Promise<unknown[]>): Promise<unknown[]> => {
      if (!offered) return [];
      try {
        return await f();
      } catch (e) {
        return [{ listingFailed: (e as Error).message }];
      }
    };
    p.shown = {
      instructions: client.getInstructions() ?? null,
      resources: await list(caps.resources, async () => (await client.listResources()).resources),
      resourceTemplates: await list(caps.resources, async () => (await client.listResourceTemplates()).resourceTemplates),
      prompts: await list(caps.prompts, async () => (await client.listPrompts()).prompts),
    };
    return p;
  }

  /**
   * Spawns `fkgqa mcp` (or any MCP server) over stdio and lists its tools.
   * @param command executable and arguments, e.g. `[process.execPath, 'bin/fkgqa.js', 'mcp', …]`
   * @throws Error when the server does not start or does not answer listTools
   */
  static async spawn(command: string[]): Promise<McpToolProvider> {
    const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: 'ignore' });
    const client = new Client({ name: 'fkgqa-eval', version: '1' });
    try {
      await client.connect(transport);
      return await McpToolProvider.connect(client, new McpToolProvider(client, 'mcp', command, async () => {}));
    } catch (e) {
      await client.close().catch(() => {});
      throw new Error(`the MCP server did not start or list its tools (${command.slice(1).join(' ')}): ${(e as Error).message}; run that command to see why`, { cause: e });
    }
  }

  /**
   * Builds the fkgqa SPARQL-MCP server in this process (src/mcp/server.ts) and connects to it over
   * an in-memory transport.
   * @throws InputError for options the server refuses (e.g. an unknown setup)
   */
  static async inProcess(options: McpServerOptions): Promise<McpToolProvider> {
    const s = await createMcpServer(options);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await s.server.connect(serverSide);
    const client = new Client({ name: 'fkgqa-eval', version: '1' });
    await client.connect(clientSide);
    return McpToolProvider.connect(client, new McpToolProvider(client, 'in-process', undefined, () => s.close()));
  }

  tools(): ToolSpec[] {
    return this.list;
  }

  surface(): ServerSurface {
    return this.shown;
  }

  /**
   * Calls a tool. An error result keeps its `_meta["fkgqa/error"]` classification. A call that gets
   * no answer (the server's connection closed, or no answer within `TOOL_CALL_TIMEOUT_MS`) is an
   * infrastructure error of class `mcp-transport`; a protocol error the server answered (e.g.
   * invalid arguments) is the agent's.
   */
  async call(name: string, args: Record<string, unknown>, options: ToolCallOptions = {}): Promise<ToolOutcome> {
    try {
      const r = (await this.client.callTool({ name, arguments: args }, { timeout: TOOL_CALL_TIMEOUT_MS, ...(options.signal ? { signal: options.signal } : {}) })) as {
        content?: { type: string; text?: string }[];
        isError?: boolean;
        _meta?: unknown;
      };
      const text = (r.content ?? []).map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
      const error = r.isError ? toolErrorMeta(r._meta) : undefined;
      return { text, isError: !!r.isError, ...(error ? { error } : {}) };
    } catch (e) {
      const message = (e as Error).message;
      if (e instanceof SdkError && !options.signal?.aborted) {
        return { text: `tool call failed: ${message}`, isError: true, error: { class: 'mcp-transport', infrastructure: true } };
      }
      return { text: `tool call failed: ${message}`, isError: true };
    }
  }

  async close(): Promise<void> {
    await this.client.close();
    await this.onClose();
  }
}
