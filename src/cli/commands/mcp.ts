/**
 * `fkgqa mcp`: flags → the endpoint registry (`openRegistry`, src/federation/registry.ts) and the
 * SPARQL-MCP server (src/mcp/server.ts), served on stdio or Streamable HTTP until the client or a
 * signal ends it.
 */
import path from 'node:path';
import { InputError } from '../../common/errors.js';
import { openRegistry, placementLine, placementMismatches, placementRefusal } from '../../federation/registry.js';
import type { McpLimits, Setup } from '../../mcp/context.js';
import type { EmbedderSpec } from '../../mcp/kgvoyager/embedder.js';
import type { KgVoyagerSetup } from '../../mcp/kgvoyager/setup.js';
import type { RetrievalMode } from '../../mcp/kgvoyager/retrieval.js';
import { serveMcpHttp, serveMcpStdio, type McpServerOptions } from '../../mcp/server.js';
import { stderrProgress } from '../progress.js';
import { untilSignal } from '../signals.js';
import { counted } from '../../common/strings.js';

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

export async function run(o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const registry = openRegistry({
    endpointsFiles: o.endpoints,
    build: o.shards,
    state: o.state,
    endpointBase: o.endpointBase,
    urls: o.endpoint,
    kgs: o.kg,
    hint: 'start fkgqa serve, or give --endpoint-base or --endpoint',
  });
  // The endpoints its tools will name must still serve the VoID their endpoints file lists: checked before serving.
  const moved = await placementMismatches(registry);
  if (moved.length > 0) throw new InputError(`${placementRefusal(moved)}; the MCP server did not start`);
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
    federationEngine: o.federationEngine,
    ...(o.mixGraphs ? { mixGraphs: true } : {}),
    ...(o.prompts ? { promptsDir: path.resolve(o.prompts) } : {}),
  };
  const refused = (why: string) => progress?.(`fkgqa mcp: refused a message: ${why}`);
  const where = placementLine(registry);
  const about = `setup ${o.setup}, ${counted(registry.endpoints.length, 'endpoint')} (${registry.source})${where ? ` on ${where}` : ''}`;
  if (o.http) {
    const s = await serveMcpHttp({ ...options, host: o.host, port: o.port, onRefused: refused });
    const json = o.json || o.format === 'json';
    process.stdout.write(json ? JSON.stringify({ url: s.url, setup: o.setup, endpoints: registry.endpoints.length, callLog: s.context.callLog.file }) + '\n' : `${s.url}\n`);
    progress?.(`fkgqa mcp: Streamable HTTP at ${s.url}; ${about}; call log ${s.context.callLog.file ?? 'in memory only'}`);
    const sig = await untilSignal();
    progress?.(`fkgqa mcp: ${sig}, stopping after ${s.context.callLog.entries.length} tool calls`);
    await s.close();
    return;
  }
  const s = serveMcpStdio({ ...options, onRefused: refused });
  progress?.(`fkgqa mcp: MCP on stdio; ${about}; call log ${s.context.callLog.file ?? 'in memory only'}`);
  void s.warmed.then((ok) =>
    progress?.(ok ? `fkgqa mcp: federation engine ${o.federationEngine} ready` : `fkgqa mcp: federation engine ${o.federationEngine} did not start (federated queries will report why)`),
  );
  // The client closing stdin ends the session (MCP stdio binding): exit 0.
  const sig = await Promise.race([s.closed.then(() => null), untilSignal()]);
  if (sig === null) return void (await s.close());
  // A signal interrupts it (130/143, as every command): stdin may still be open and a call or the
  // engine's start-up may be running, so the process exits itself once the engine is released
  // (Comunica threads terminated, the Jena JVM ended) or after SIGNAL_CLOSE_MS at most.
  progress?.(`fkgqa mcp: interrupted (${sig}) after ${s.context.callLog.entries.length} tool calls; stopping the federation engine`);
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([s.close().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, SIGNAL_CLOSE_MS)))]);
  clearTimeout(timer);
  process.exit(sig === 'SIGINT' ? 130 : 143);
}

/** The longest `fkgqa mcp` waits for its federation engine to stop after SIGINT/SIGTERM, in ms. */
const SIGNAL_CLOSE_MS = 3000;
