/**
 * The pair of serves the Virtuoso store's row tests compare: the demo build served by the Virtuoso
 * store and by oxigraph side by side, and one answer read as status plus sorted rows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { serve, type ServeOptions, type ShardServer } from '../src/serve/server.js';
import { demoBuild, tmpDir } from './helpers.js';

/** Status and rows (sorted) of one answer in SPARQL JSON results; the text of any other. */
export async function answerOf(url: string, query: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/sparql-query', accept: 'application/sparql-results+json' }, body: query });
  const text = await r.text();
  if (r.status !== 200) return { status: r.status, body: text };
  const doc = JSON.parse(text) as { head: { vars: string[] }; results: { bindings: unknown[] } };
  return { status: 200, body: { vars: doc.head.vars, rows: doc.results.bindings.map((b) => JSON.stringify(b)).sort() } };
}

/**
 * The demo build (in a temporary folder named from `prefix`) served twice at once: by the Virtuoso
 * store (with `virtuosoOnly` besides `options`) and by oxigraph (no files written).
 * @param options serve options both serves get (time limit, `withOriginals`)
 */
export async function servePair(prefix: string, options: Partial<ServeOptions>, virtuosoOnly: Partial<ServeOptions> = {}): Promise<{ virtuoso: ShardServer; oxigraph: ShardServer }> {
  const build = await demoBuild(tmpDir(prefix));
  const [virtuoso, oxigraph] = await Promise.all([serve({ ...options, ...virtuosoOnly, shards: build, store: 'virtuoso' }), serve({ ...options, shards: build, writeFiles: false })]);
  return { virtuoso, oxigraph };
}

/**
 * A build of one small graph, written here as N-Triples (`triples`, one a line), served twice at
 * once: by the Virtuoso store (with `virtuosoOnly` besides `options`) and by oxigraph; its
 * unsharded graph is endpoint `name`.
 * @param name the graph's name (its kg name and endpoint id)
 * @param triples the graph's N-Triples lines
 */
export async function serveGraphPair(
  name: string,
  triples: string[],
  options: Partial<ServeOptions>,
  virtuosoOnly: Partial<ServeOptions> = {},
): Promise<{ virtuoso: ShardServer; oxigraph: ShardServer }> {
  const dir = tmpDir(`fkgqa-${name}-`);
  const source = path.join(dir, 'source');
  fs.mkdirSync(path.join(source, 'kg'), { recursive: true });
  fs.writeFileSync(path.join(source, 'kg', `${name}.nt`), `${triples.join('\n')}\n`);
  fs.writeFileSync(path.join(source, 'dev.json'), JSON.stringify([{ kg_name: name, question: 'q1', query: 'select ?s where { ?s a ?t }' }]));
  const build = path.join(dir, 'shards');
  const { DEFAULT_PARTITION_OPTIONS, partition } = await import('../src/partition/index.js');
  await partition({ ...DEFAULT_PARTITION_OPTIONS, source, out: build });
  const both = { ...options, shards: build, withOriginals: true };
  const [virtuoso, oxigraph] = await Promise.all([serve({ ...both, ...virtuosoOnly, store: 'virtuoso' }), serve({ ...both, writeFiles: false })]);
  return { virtuoso, oxigraph };
}
