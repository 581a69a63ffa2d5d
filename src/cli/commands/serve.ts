/** `fkgqa serve`: flags → `serve` (src/index.ts); prints "id<TAB>url" per endpoint, stops on SIGINT/SIGTERM. */
import { stateDir } from '../../build/state.js';
import { serve } from '../../index.js';
import { countsSummary } from '../../serve/request-log.js';
import { releaseServeState } from '../../serve/state.js';
import { stderrProgress } from '../progress.js';
import { untilSignal } from '../signals.js';

export async function run(o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  // Listening from the start: a signal while the stores load stops serve as one after it (exit 0, lock removed).
  const stop = untilSignal();
  const starting = serve({
    shards: o.shards,
    host: o.host,
    port: o.port,
    portPerEndpoint: !!o.portPerEndpoint,
    kgs: o.kg,
    withOriginals: !!o.withOriginals,
    timeoutMs: o.timeout,
    maxBodyBytes: o.maxBody,
    maxQueryDepth: o.maxQueryDepth,
    maxOperatorDepth: o.maxOperatorDepth,
    state: o.state,
    profiles: o.profiles,
    workers: o.workers,
    store: o.store,
    storeHosts: o.storeHost,
    requestLog: o.requestLog,
    requestLogMaxBytes: o.requestLogMax,
    federationEngine: o.federationEngine,
    mixGraphs: !!o.mixGraphs,
    engines: o.engines,
    maxQueued: o.maxQueued,
    corsOrigins: o.corsOrigin,
    warmFederation: true,
    progress,
  });
  const first = await Promise.race([starting, stop]);
  if (typeof first === 'string') {
    progress?.(`fkgqa serve: ${first} while loading the stores, stopping`);
    releaseServeState(stateDir(o.shards, o.state));
    process.exit(0); // the loading threads stop with the process
  }
  const server = first;
  process.stdout.write(server.endpoints.map((e) => `${e.id}\t${e.url}\n`).join(''));
  const sig = await stop;
  progress?.(`fkgqa serve: ${sig}, stopping`);
  const counts = server.log.counts();
  const restarts = new Map(server.endpoints.map((e) => [e.id, server.restartsOf(e.id)?.restarts]));
  await server.close();
  if (progress)
    for (const line of countsSummary(
      counts,
      server.endpoints.map((e) => e.id),
      (id) => restarts.get(id),
    ))
      progress(line);
}
