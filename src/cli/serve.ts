/**
 * The `serve` and `verify` commands: a thin layer over `serve` (src/serve/server.ts) and `verify`
 * (src/verify/verify.ts).
 */
import { Command, Option } from 'commander';
import { MAX_QUERY_DEPTH } from '../sparql/guard.js';
import { REQUEST_LOG_MAX_BYTES } from '../serve/request-log.js';
import { serve } from '../serve/server.js';
import { stderrProgress } from './progress.js';
import { formatOption, jsonOption, outputFormat } from './options.js';
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
        'Writes nothing into the build: endpoints.json (and the request log) go to the state folder (default <shards>.state/), ' +
        'removed at stop; a second serve with the same state folder exits 2. Prints "id<TAB>url" per endpoint on stdout; stops on SIGINT/SIGTERM. ' +
        'Limits (4xx): --max-body (413; also the longest query, 400), --max-query-depth (400), --timeout (503). See docs/serving.md.',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option('--host <host>', 'interface to bind (loopback unless told otherwise)', '127.0.0.1')
    .addOption(new Option('--port <n>', 'port (0: any free port); with --port-per-endpoint the first of consecutive ports').argParser(integer('--port', 0, 65535)).default(0))
    .option('--port-per-endpoint', 'one port per endpoint (http://host:port/sparql) instead of one path per endpoint (http://host:port/<kg>-shard<N>/sparql)')
    .option('--kg <name...>', 'serve only these graphs')
    .option('--with-originals', 'also serve each unsharded graph (the union of its shards) as endpoint <kg>')
    .addOption(new Option('--timeout <ms>', 'time limit of one query; over it the query is stopped and answered 503').argParser(integer('--timeout', 1)).default(30_000))
    .addOption(new Option('--max-body <bytes>', 'largest request body; larger ones are answered 413').argParser(integer('--max-body', 1)).default(1 << 20))
    .addOption(new Option('--max-query-depth <n>', 'deepest bracket nesting ({ ( [) of a query; deeper ones are answered 400 before parsing').argParser(integer('--max-query-depth', 1)).default(MAX_QUERY_DEPTH))
    .option('--state <dir>', 'state folder for endpoints.json and the request log (default: <shards>.state beside the build)')
    .option('--profiles <file>', 'behaviour profiles (JSON: default / graphs / endpoints; see docs/serving-reference.md)')
    .addOption(new Option('--worker-per <unit>', 'one oxigraph worker per shard (isolated) or per graph (less memory)').choices(['shard', 'graph']).default('shard'))
    .option('--request-log [file]', 'append every request as a JSON line to this file (no file: requests.jsonl in the state folder)')
    .addOption(new Option('--request-log-max <bytes>', 'size cap of the request log; over it the file is rotated to <name>.1<ext>').argParser(integer('--request-log-max', 1024)).default(REQUEST_LOG_MAX_BYTES))
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
        maxQueryDepth: o.maxQueryDepth,
        state: o.state,
        profiles: o.profiles,
        workerPer: o.workerPer,
        requestLog: o.requestLog,
        requestLogMaxBytes: o.requestLogMax,
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
        'unsharded graph. The build is checked first (build.json, benchmark.json, manifests, shard sha256).',
    )
    .option('--shards <dir>', 'directory of a fkgqa partition build', 'shards')
    .option('--endpoints [file]', 'use running endpoints (fkgqa serve) listed in this endpoints file; without a file: <state>/endpoints.json. Every endpoint must answer, else exit 2. Without --endpoints: start the endpoints in this process')
    .option('--state <dir>', 'state folder of the build: stored gold answers, default endpoints file (default: <shards>.state beside the build)')
    .option('--kg <name...>', 'verify only these graphs')
    .option('--query <id...>', 'verify only these queries (<kg>/q<N>; without --kg, their graphs)')
    .addOption(new Option('--timeout <ms>', 'time limit per query and side (unsharded, federated, trivial)').argParser(integer('--timeout', 1)).default(20_000))
    .addOption(new Option('--form <form...>', 'forms to run').choices(FORMS).default(FORMS))
    .addOption(formatOption(['text', 'json'], 'the report on stdout as text or JSON (default: text)'))
    .addOption(jsonOption())
    .option('-q, --quiet', 'no progress on stderr')
    .addHelpText('after', '\nExit codes: 0 every answer identical or equivalent (failures to answer are reported, not counted), 1 an answer differs, 2 bad input (build, endpoints file, options) or unreachable endpoints.')
    .action(async (o) => {
      const format = outputFormat(o);
      const report = await verify({
        shards: o.shards,
        endpoints: o.endpoints,
        state: o.state,
        kgs: o.kg,
        queries: o.query,
        timeoutMs: o.timeout,
        forms: o.form as FederationForm[],
        progress: stderrProgress(o.quiet),
      });
      process.stdout.write(format === 'json' ? JSON.stringify(report, null, 2) + '\n' : formatVerifyReport(report));
      if (Object.values(report.totals).some((t) => t.different > 0)) process.exitCode = 1;
    });
}
