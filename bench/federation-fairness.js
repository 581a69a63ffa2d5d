// node bench/federation-fairness.js [-- --shards DIR] [-- --engines N] [-- --timeout MS]
// /federation/sparql under load from several clients (docs/serving.md, "The federation endpoint: a
// fair share per client"): six heavy clients (remote addresses 127.0.0.2–7) send 4 federated queries
// each (3 SERVICE clauses joined, 9,800 rows) at once; once the first heavy answer arrived, a light
// client (127.0.0.8) sends a 280-row join. Prints how long the light query took, alone and beside the
// backlog, how many heavy answers arrived while it waited, and the load before and after. Default
// build: the demo build under ./shards (fkgqa partition --out shards), its library graph.
import fs from 'node:fs';
import http from 'node:http';
import { serve } from '../dist/serve/server.js';
import { benchOptions, loadAverage } from './lib.js';

const o = benchOptions({ shards: 'shards', engines: '2', timeout: '300000' });
if (!fs.existsSync(o.shards)) {
  console.error(`bench/federation-fairness: no build at ${o.shards} (give --shards, a build with the demo's library graph)`);
  process.exit(2);
}
const loadBefore = loadAverage();
const s = await serve({ shards: o.shards, kgs: ['library'], timeoutMs: Number(o.timeout), writeFiles: false, warmFederation: true, engines: Number(o.engines) });
try {
  await s.federationWarm;
  const ep = (n) => s.endpoint(`library-shard${n}`).url;
  const fed = new URL(`${new URL(ep(1)).origin}/federation/sparql`);
  const heavy = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?a ?b ?c } SERVICE <${ep(2)}> { ?d ?e ?f } SERVICE <${ep(1)}> { ?g ?h ?i } }`;
  const light = `SELECT (COUNT(*) AS ?n) WHERE { SERVICE <${ep(1)}> { ?s ?p ?o } SERVICE <${ep(2)}> { ?x ?y ?z } }`;
  /** POSTs a query from a local address (each 127.0.0.x is another client); resolves with its status and times. */
  const post = (query, localAddress) =>
    new Promise((resolve, reject) => {
      const sent = performance.now();
      const req = http.request(
        {
          host: fed.hostname,
          port: fed.port,
          path: fed.pathname,
          method: 'POST',
          localAddress,
          agent: false,
          headers: { 'Content-Type': 'application/sparql-query', Accept: 'application/sparql-results+json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode, stopped: res.headers['fkgqa-stopped'] ?? null, sent, done: performance.now() }));
        },
      );
      req.on('error', reject);
      req.end(query);
    });
  await Promise.all([post(light, '127.0.0.8'), post(light, '127.0.0.8')]);
  const alone = await post(light, '127.0.0.8');
  const heavyAnswers = ['2', '3', '4', '5', '6', '7'].flatMap((a) => Array.from({ length: 4 }, () => post(heavy, `127.0.0.${a}`)));
  let answered = 0;
  for (const h of heavyAnswers) void h.then(() => answered++);
  while (answered < 1) await new Promise((r) => setTimeout(r, 20));
  const l = await post(light, '127.0.0.8');
  const hs = await Promise.all(heavyAnswers);
  const statuses = {};
  for (const h of hs) statuses[h.status] = (statuses[h.status] ?? 0) + 1;
  console.log(
    JSON.stringify({
      engines: Number(o.engines),
      timeoutMs: Number(o.timeout),
      lightAloneMs: Math.round(alone.done - alone.sent),
      light: { status: l.status, stopped: l.stopped, ms: Math.round(l.done - l.sent) },
      heavyAnsweredWhileLightWaited: hs.filter((h) => h.done > l.sent && h.done < l.done).length,
      heavyStatuses: statuses,
      backlogMs: Math.round(Math.max(...hs.map((h) => h.done)) - Math.min(...hs.map((h) => h.sent))),
      loadBefore,
      loadAfter: loadAverage(),
    }),
  );
} finally {
  await s.close();
}
