// The baseline of `npm run bench:serve`: one shard in an oxigraph store behind a bare node:http
// handler in one process (no worker thread, no protocol checks, no log): GET ?query= answered with
// oxigraph's SPARQL JSON results. Prints the port on stdout once listening; stops on SIGTERM.
// Usage: node bench/bare-oxigraph.js <shard.nt>
import fs from 'node:fs';
import http from 'node:http';
import * as oxigraph from 'oxigraph';

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
