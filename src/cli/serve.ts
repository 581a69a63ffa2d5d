/**
 * The `serve` and `verify` commands: a thin layer over `serve` (src/serve/server.ts) and `verify`
 * (src/verify/verify.ts).
 */
import { Command, Option } from 'commander';
import { serve } from '../serve/server.js';
import { stderrProgress } from './progress.js';
import { formatVerifyReport, FORMS, verify, type FederationForm } from '../verify/verify.js';

type IntegerParser = (name: string, min: number, max?: number) => (v: string) => number;

/** Waits for SIGINT or SIGTERM. */
export function untilSignal(): Promise<string> {
  return new Promise((resolve) => {
    const on = (sig: string) => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(sig);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** Registers `fkgqa serve` and `fkgqa verify` on the program. */
export function registerServeCommands(cli: Command, integer: IntegerParser): void {
  cli
    .command('serve')
    .description(
      'Serve every shard of a build as its own SPARQL endpoint (SPARQL 1.1 Protocol; oxigraph stores in worker threads). ' +
        'Writes <shards>/endpoints.json; prints "id<TAB>url" per endpoint on stdout; stops on SIGINT/SIGTERM.',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option('--host <host>', 'interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port (0: any free port); with --port-per-endpoint the first of consecutive ports').argParser(integer('--port', 0, 65535)).default(0))
    .option('--port-per-endpoint', 'one port per endpoint (http://host:port/sparql) instead of one path per endpoint (http://host:port/<kg>-shard<N>/sparql)')
    .option('--kg <name...>', 'serve only these graphs')
    .option('--with-originals', 'also serve each unsharded graph (the union of its shards) as endpoint <kg>')
    .addOption(new Option('--timeout <ms>', 'time limit of one query; over it the query is stopped and answered 503').argParser(integer('--timeout', 1)).default(30_000))
    .addOption(new Option('--max-body <bytes>', 'largest request body; larger ones are answered 413').argParser(integer('--max-body', 1)).default(1 << 20))
    .option('--profiles <file>', 'behaviour profiles (JSON: default / graphs / endpoints; see README)')
    .addOption(new Option('--worker-per <unit>', 'one oxigraph worker per shard (isolated) or per graph (less memory)').choices(['shard', 'graph']).default('shard'))
    .option('--request-log <file>', 'append every request as a JSON line to this file')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
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
        profiles: o.profiles,
        workerPer: o.workerPer,
        requestLog: o.requestLog,
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
    });

  cli
    .command('verify')
    .description(
      'Check that the federation loses no answer: run every distinct gold query federated over its graph\'s shard endpoints ' +
        '(Comunica) and in trivial-federation form (UNION of SERVICE per triple pattern), and compare with the answer on the ' +
        'unsharded graph. Exit code 1 when any answer differs.',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option('--endpoints <file>', 'endpoints.json of running endpoints (fkgqa serve); default: start them in this process')
    .option('--kg <name...>', 'verify only these graphs')
    .option('--query <id...>', 'verify only these queries (<kg>/q<N>)')
    .addOption(new Option('--timeout <ms>', 'time limit per query and side (unsharded, federated, trivial)').argParser(integer('--timeout', 1)).default(20_000))
    .addOption(new Option('--form <form...>', 'forms to run').choices(FORMS).default(FORMS))
    .option('--json', 'the report as JSON on stdout')
    .option('-q, --quiet', 'no progress on stderr')
    .action(async (o) => {
      const report = await verify({
        shards: o.shards,
        endpoints: o.endpoints,
        kgs: o.kg,
        queries: o.query,
        timeoutMs: o.timeout,
        forms: o.form as FederationForm[],
        progress: stderrProgress(o.quiet),
      });
      process.stdout.write(o.json ? JSON.stringify(report, null, 2) + '\n' : formatVerifyReport(report));
      if (Object.values(report.totals).some((t) => t.different > 0)) process.exitCode = 1;
    });
}
