/**
 * The `mcp` command: a thin layer over src/mcp/server.ts (`createMcpContext`, `buildMcpServer`,
 * `serveMcpHttp`) and the registry loaders of src/mcp/registry.ts. See docs/mcp.md.
 */
import path from 'node:path';
import { Command, Option } from 'commander';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { InputError } from '../common/errors.js';
import { SETUPS, type McpLimits, type Setup } from '../mcp/context.js';
import type { EmbedderSpec } from '../mcp/kgvoyager/embedder.js';
import type { KgVoyagerSetup } from '../mcp/kgvoyager/mcp.js';
import type { RetrievalMode } from '../mcp/kgvoyager/retrieval.js';
import { openRegistry } from '../federation/registry.js';
import { buildMcpServer, createMcpContext, serveMcpHttp, type McpServerOptions } from '../mcp/server.js';
import { stderrProgress } from './progress.js';
import { untilSignal } from './serve.js';

type IntegerParser = (name: string, min: number, max?: number) => (v: string) => number;

/**
 * The KGVoyager configuration from the command's options.
 * @throws InputError for an embedder without its URL/model or model folder
 */
function kgVoyagerSetupFromOptions(o: Record<string, string | number | boolean | undefined>): KgVoyagerSetup {
  let embedder: EmbedderSpec = { kind: 'ngram' };
  if (o.embedder === 'openai') {
    if (!o.embeddingUrl || !o.embeddingModel) throw new InputError('--embedder openai needs --embedding-url and --embedding-model');
    const key = process.env[String(o.embeddingKeyEnv)];
    embedder = { kind: 'openai', url: String(o.embeddingUrl), model: String(o.embeddingModel), ...(key ? { apiKey: key } : {}) };
  } else if (o.embedder === 'local') {
    if (!o.embeddingModelPath) throw new InputError('--embedder local needs --embedding-model-path <dir>');
    embedder = { kind: 'local', modelPath: String(o.embeddingModelPath) };
  }
  return { embedder, options: { retrieval: o.retrieval as RetrievalMode, rrfK: Number(o.rrfK), timeoutMs: Number(o.exploreTimeout) } };
}

/** Registers `fkgqa mcp` on the program. */
export function registerMcpCommand(cli: Command, integer: IntegerParser): void {
  cli
    .command('mcp')
    .description(
      'Run the SPARQL-MCP server of the FKGQA paper (section 3): run_sparql_query (SERVICE clauses; one is sent directly, several go to the ' +
        'federation engine), in the void_tool setup get_void_descriptions, in the kgvoyager setup (or with --kgvoyager) the KGVoyager exploration tools, over the endpoints of a running fkgqa serve, a build, or any SPARQL endpoints. ' +
        'Speaks MCP on stdio (default) or Streamable HTTP (--http). See docs/mcp.md.',
    )
    .option('--endpoints <file...>', 'endpoints files of running fkgqa serves (several: one federation over all their endpoints)')
    .option('--shards <dir>', 'a fkgqa build: its running serve (<build>.state/endpoints.json, then <build>/endpoints.json), or with --endpoint-base its shards under that URL; gives descriptions and VoID files')
    .option('--state <dir>', 'state folder of the build (default <build>.state): call log and VoID cache under mcp/')
    .option('--endpoint-base <url>', 'with --shards: the shards are at <url>/<kg>-shard<N>/sparql')
    .option('--endpoint <url...>', 'plain SPARQL endpoint URLs (any endpoints)')
    .option('--kg <name...>', 'only the endpoints of these graphs')
    .addOption(new Option('--setup <setup>', 'evaluation setup (paper, section 5)').choices(SETUPS).default('baseline'))
    .option('--http', 'serve Streamable HTTP at http://<host>:<port>/mcp instead of stdio')
    .option('--host <host>', 'with --http: interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .addOption(new Option('--port <n>', 'with --http: port (0: any free port)').argParser(integer('--port', 0, 65535)).default(0))
    .option('--call-log <file>', 'append every tool call as a JSON line to FILE (default <state>/mcp/calls.jsonl when there is a build)')
    .addOption(new Option('--timeout <ms>', 'default time limit of run_sparql_query (agents may ask for 1000..100000)').argParser(integer('--timeout', 1000, 100_000)).default(30_000))
    .addOption(new Option('--preview-rows <n>', 'rows shown to the agent; the rest are counted').argParser(integer('--preview-rows', 0)).default(100))
    .addOption(new Option('--max-query-chars <n>', 'longest query accepted').argParser(integer('--max-query-chars', 1)).default(8000))
    .addOption(new Option('--engines <n>', 'federation engine threads (Comunica), for clients that send federated queries at the same time').argParser(integer('--engines', 1, 16)).default(1))
    .addOption(new Option('--void-step-timeout <ms>', 'time limit of each step of the VoID chain').argParser(integer('--void-step-timeout', 1)).default(10_000))
    .option('--kgvoyager', 'add the KGVoyager exploration tools to the setup (setup kgvoyager always has them); see docs/kgvoyager.md')
    .addOption(new Option('--retrieval <mode>', 'KGVoyager search ranking').choices(['hybrid', 'bm25', 'dense']).default('hybrid'))
    .addOption(new Option('--rrf-k <k>', 'KGVoyager: constant k of reciprocal rank fusion').argParser(integer('--rrf-k', 0)).default(2))
    .addOption(new Option('--embedder <kind>', 'KGVoyager dense side: built-in character 3-grams, an OpenAI-compatible /v1/embeddings service, or a local model folder').choices(['ngram', 'openai', 'local']).default('ngram'))
    .option('--embedding-url <url>', 'with --embedder openai: base URL of the service (e.g. http://127.0.0.1:8080)')
    .option('--embedding-model <name>', 'with --embedder openai: the model name')
    .option('--embedding-key-env <var>', 'with --embedder openai: environment variable holding the API key', 'OPENAI_API_KEY')
    .option('--embedding-model-path <dir>', 'with --embedder local: folder of a feature-extraction model (needs the optional package @huggingface/transformers)')
    .addOption(new Option('--explore-timeout <ms>', 'KGVoyager: time limit of one exploration tool call').argParser(integer('--explore-timeout', 1, 100_000)).default(10_000))
    .addOption(new Option('--format <format>', 'with --http: how the startup line on stdout is written').choices(['text', 'json']).default('text'))
    .option('--json', 'shorthand for --format json')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const progress = stderrProgress(o.quiet);
      const registry = openRegistry({ endpointsFiles: o.endpoints, build: o.shards, state: o.state, endpointBase: o.endpointBase, urls: o.endpoint, kgs: o.kg, hint: 'start fkgqa serve, or give --endpoint-base or --endpoint' });
      const limits: Partial<McpLimits> = { defaultTimeoutMs: o.timeout, previewRows: o.previewRows, maxQueryChars: o.maxQueryChars, voidStepTimeoutMs: o.voidStepTimeout };
      const options: McpServerOptions = {
        registry,
        setup: o.setup as Setup,
        limits,
        ...(o.shards ? { build: o.shards } : {}),
        ...(o.state ? { state: o.state } : {}),
        ...(o.callLog ? { callLog: path.resolve(o.callLog) } : {}),
        ...(o.kgvoyager || o.setup === 'kgvoyager' ? { kgvoyager: kgVoyagerSetupFromOptions(o) } : {}),
        engines: o.engines,
      };
      const about = `setup ${o.setup}, ${registry.endpoints.length} endpoints (${registry.source})`;
      if (o.http) {
        const s = await serveMcpHttp({ ...options, host: o.host, port: o.port });
        const json = o.json || o.format === 'json';
        process.stdout.write(json ? JSON.stringify({ url: s.url, setup: o.setup, endpoints: registry.endpoints.length, callLog: s.context.callLog.file }) + '\n' : `${s.url}\n`);
        progress?.(`fkgqa mcp: Streamable HTTP at ${s.url}; ${about}; call log ${s.context.callLog.file ?? 'in memory only'}`);
        const sig = await untilSignal();
        progress?.(`fkgqa mcp: ${sig}, stopping after ${s.context.callLog.entries.length} tool calls`);
        await s.close();
        return;
      }
      const context = createMcpContext(options);
      void context.sparql.warm();
      progress?.(`fkgqa mcp: MCP on stdio; ${about}; call log ${context.callLog.file ?? 'in memory only'}`);
      const handle = serveStdio(() => buildMcpServer(context, options.tools));
      // The client closing stdin ends the session (MCP stdio binding); a signal too.
      await Promise.race([new Promise<void>((resolve) => process.stdin.once('close', () => resolve()).once('end', () => resolve())), untilSignal()]);
      await handle.close();
      await context.close();
    });
}
