// The baselines of `npm run bench:serve` (bench/serve.js), in one process, with nothing of fkgqa:
//
//   node bench/bare-oxigraph.js <shard.nt>
//     one shard in an oxigraph store behind a bare node:http handler (no worker thread, no
//     protocol checks, no log): GET ?query= answered with oxigraph's SPARQL JSON results. Prints
//     the port on stdout once listening; stops on SIGTERM.
//
//   node bench/bare-oxigraph.js --load <build> [kg ...]
//     loads every shard of the build (of those graphs) into its own oxigraph store, as one process
//     can, and prints one line `loaded <shards> <triples> <ms> <peak RSS bytes>` (ms from the
//     process start, node's own start-up included); exits 0, or 1 with the error when the stores do
//     not fit. One oxigraph instance holds at most 4 GiB (about 1 KB per triple), so, as serve does with its
//     workers (MAX_TRIPLES_PER_WORKER, src/serve/server.ts), a fresh instance takes the next shards
//     once one holds 2,000,000 triples: oxigraph's web build compiled once and instantiated per
//     instance (a module imported under its own URL is a new instance), all in this one thread.
import fs from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Triples one oxigraph instance takes before the next one starts (serve's MAX_TRIPLES_PER_WORKER). */
const PER_INSTANCE = 2_000_000;

/** Peak resident memory of this process, in bytes (Linux: VmHWM). */
function peakRss() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

if (process.argv[2] === '--load') {
  const build = process.argv[3];
  const kgs = process.argv.slice(4);
  let shards = 0;
  let triples = 0;
  const stores = [];
  const require = createRequire(import.meta.url);
  const web = pathToFileURL(require.resolve('oxigraph/web.js')).href;
  const module = await WebAssembly.compile(fs.readFileSync(require.resolve('oxigraph/web_bg.wasm')));
  let oxigraph;
  let inInstance = Infinity;
  try {
    for (const g of fs.readdirSync(build).sort()) {
      const manifest = path.join(build, g, 'manifest.json');
      if (!fs.existsSync(manifest) || (kgs.length && !kgs.includes(g))) continue;
      for (const s of JSON.parse(fs.readFileSync(manifest, 'utf8')).shards) {
        if (inInstance >= PER_INSTANCE) {
          oxigraph = await import(`${web}?instance=${stores.length}`);
          oxigraph.initSync({ module });
          inInstance = 0;
        }
        const store = new oxigraph.Store();
        store.load(fs.readFileSync(path.join(build, g, s.file ?? `${s.name}.nt`)), { format: 'application/n-triples', to_graph_name: oxigraph.defaultGraph(), no_transaction: true });
        stores.push(store);
        shards++;
        triples += store.size;
        inInstance += store.size;
      }
    }
  } catch (e) {
    process.stdout.write(`failed after ${shards} shards, ${triples} triples: ${e.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`loaded ${shards} ${triples} ${Math.round(performance.now())} ${peakRss()}\n`);
  process.exit(0);
}

const oxigraph = await import('oxigraph');
const store = new oxigraph.Store();
store.load(fs.readFileSync(process.argv[2]), { format: 'application/n-triples', to_graph_name: oxigraph.defaultGraph(), no_transaction: true });
const server = http.createServer((req, res) => {
  try {
    const query = new URL(req.url, 'http://localhost').searchParams.get('query');
    const body = store.query(query, { results_format: 'application/sparql-results+json' });
    res.writeHead(200, { 'Content-Type': 'application/sparql-results+json' });
    res.end(body);
  } catch (e) {
    res.writeHead(400, { 'Content-Type': 'text/plain' });
    res.end(String(e));
  }
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
