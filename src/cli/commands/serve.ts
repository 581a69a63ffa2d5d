/** `fkgqa serve`: flags → `serve` (src/index.ts); prints "id<TAB>url" per endpoint, stops on SIGINT/SIGTERM. */
import { serve } from '../../index.js';
import { stderrProgress } from '../progress.js';
import { untilSignal } from '../signals.js';

export async function run(o: Record<string, any>): Promise<void> {
  const progress = stderrProgress(o.quiet);
  const server = await serve({
    shards: o.shards,
    host: o.host,
    port: o.port,
    portPerEndpoint: !!o.portPerEndpoint,
    kgs: o.kg,
    withOriginals: !!o.withOriginals,
    timeoutMs: o.timeout,
    maxBodyBytes: o.maxBody,
    maxQueryDepth: o.maxQueryDepth,
    state: o.state,
    profiles: o.profiles,
    workers: o.workers,
    requestLog: o.requestLog,
    requestLogMaxBytes: o.requestLogMax,
    federationEngine: o.federationEngine,
    mixGraphs: !!o.mixGraphs,
    progress,
  });
  process.stdout.write(server.endpoints.map((e) => `${e.id}\t${e.url}\n`).join(''));
  const sig = await untilSignal();
  progress?.(`fkgqa serve: ${sig}, stopping`);
  const counts = server.log.counts();
  await server.close();
  if (progress) {
    const total = Object.values(counts).reduce((n, c) => n + c.total, 0);
    progress(`fkgqa serve: ${total} requests`);
    for (const [id, c] of Object.entries(counts)) {
      const { total: t, errors, ...kinds } = c;
      progress(`  ${id}: ${t} (${Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(', ')}; errors ${errors})`);
    }
  }
}
