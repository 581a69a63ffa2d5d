/**
 * Where an agent's tools come from: an MCP server, through the official MCP client
 * (@modelcontextprotocol/client 2.4.0). `McpToolProvider.spawn` starts `fkgqa mcp` over stdio, so
 * the harness evaluates the server a user would run (`--tools mcp`, the default);
 * `McpToolProvider.inProcess` connects to the same server built in this process over an
 * in-memory transport (`--tools in-process`: no process per run, used by the tests of the loop).
 * The harness adds its own two tools, `submit_final_query {query}` and `cancel {reason}`
 * (HARNESS_TOOLS).
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { createMcpServer, type McpServerOptions } from '../mcp/server.js';
import type { ToolSpec } from './chat.js';

/** A tool's answer as the model sees it. */
export interface ToolOutcome {
  text: string;
  isError: boolean;
}

/** A source of tools. */
export interface ToolProvider {
  readonly source: 'mcp' | 'in-process';
  /** The command line of the MCP server (stdio only). */
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

interface McpTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** Tools of a `fkgqa mcp` process over stdio (module comment). */
export class McpToolProvider implements ToolProvider {
  private list: ToolSpec[] = [];

  private constructor(
    private readonly client: Client,
    readonly source: 'mcp' | 'in-process',
    readonly command: string[] | undefined,
    private readonly onClose: () => Promise<void>,
  ) {}

  private static async connect(client: Client, p: McpToolProvider): Promise<McpToolProvider> {
    const { tools } = (await client.listTools()) as { tools: McpTool[] };
    p.list = tools.map((t) => ({ name: t.name, description: t.description ?? '', parameters: t.inputSchema ?? { type: 'object' } }));
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
      throw new Error(`the MCP server did not start or list its tools (${command.slice(1).join(' ')}): ${(e as Error).message}; run that command to see why`);
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
    await this.onClose();
  }
}
