/**
 * The query page of `fkgqa serve`: what a browser gets at `/` (as Oxigraph's server and Fuseki
 * ship one), a single self-contained HTML page with its script and style inline, that lists the
 * endpoints (the federation endpoint first, then every shard endpoint with its graph and triples)
 * and runs a query typed in a text area against the one chosen, showing the answer as a table
 * (SELECT), `true`/`false` (ASK) or N-Triples (CONSTRUCT, DESCRIBE). It loads nothing from
 * anywhere: its Content-Security-Policy allows its own inline script and style (by their SHA-256)
 * and requests to this server only (`connect-src 'self'`, plus the endpoints' own ports with
 * `--port-per-endpoint`). Answers are written into the page as text, never as markup. Clients that
 * do not ask for HTML first (curl, fetch, SPARQL libraries) keep getting the endpoints file as JSON
 * at `/` (routing.ts, `prefersHtml`).
 */
import { createHash } from 'node:crypto';
import type { EndpointsFile } from './state.js';
import { FEDERATION_PATH } from './defaults.js';
import { esc } from '../common/strings.js';

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em auto;padding:0 1.5em;max-width:1200px;color:#222}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.1em;margin:1.2em 0 .4em}
.note{color:#555;margin:.2em 0}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
.wide{overflow-x:auto;max-height:60vh;overflow-y:auto}
#endpoints td:nth-child(4){text-align:right}#endpoints button{font-size:12px}
textarea{box-sizing:border-box;width:100%;min-height:11em;font:13px/1.4 ui-monospace,monospace}
.bar{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.5em 0}
select{max-width:100%}
#status{color:#555}#status.error{color:#b00020;white-space:pre-wrap;font:12px/1.4 ui-monospace,monospace}
#results td{font:12px ui-monospace,monospace;overflow-wrap:anywhere;max-width:40em}
pre#graph{white-space:pre-wrap;font:12px ui-monospace,monospace}`;

/** The page's script: fills the endpoint list and the chooser from the data block, runs queries, writes answers as text. */
const SCRIPT = `(() => {
const data = JSON.parse(document.getElementById('fkgqa-endpoints').textContent);
const $ = (id) => document.getElementById(id);
const el = (tag, text) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; };
// An endpoint's URL on the host this page was loaded from (same origin, whatever name the browser used for the server).
const here = (url) => { const u = new URL(url, location.href); return location.protocol + '//' + location.hostname + (u.port ? ':' + u.port : '') + u.pathname; };
const targets = [{ id: 'federation', label: 'federation endpoint (SERVICE queries over the shard endpoints)', url: here(data.federation) }]
  .concat(data.endpoints.map((e) => ({ id: e.id, label: e.id + ' (' + e.graph + ', ' + e.triples + ' triples)', url: here(e.url) })));
for (const t of targets) { const o = el('option', t.label); o.value = t.id; $('endpoint').append(o); }
const list = $('endpoints').querySelector('tbody');
for (const t of targets) {
  const e = data.endpoints.find((x) => x.id === t.id);
  const tr = el('tr');
  tr.append(el('td', t.id), el('td', e ? e.graph : ''), el('td', t.url), el('td', e ? String(e.triples) : ''));
  const td = el('td');
  if (e) { const b = el('button', 'SERVICE'); b.type = 'button'; b.title = 'insert SERVICE <' + t.url + '> { } at the cursor'; b.addEventListener('click', () => insert('SERVICE <' + t.url + '> { ?s ?p ?o }')); td.append(b); }
  tr.append(td);
  list.append(tr);
}
const q = $('query');
const insert = (text) => { const a = q.selectionStart, b = q.selectionEnd; q.value = q.value.slice(0, a) + text + q.value.slice(b); q.focus(); q.selectionStart = q.selectionEnd = a + text.length; };
const first = data.endpoints[0];
if (first && !q.value) q.value = 'SELECT * WHERE {\\n  SERVICE <' + here(first.url) + '> { ?s ?p ?o }\\n} LIMIT 10';
const status = (text, error) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };
const term = (t) => (t === undefined ? '' : t.type === 'uri' ? '<' + t.value + '>' : t.type === 'bnode' ? '_:' + t.value : t['xml:lang'] ? t.value + '@' + t['xml:lang'] : t.value);
function show(json) {
  const out = $('output');
  out.replaceChildren();
  if (typeof json.boolean === 'boolean') { out.append(el('p', String(json.boolean))); return 'ASK: ' + json.boolean; }
  const vars = (json.head && json.head.vars) || [];
  const rows = (json.results && json.results.bindings) || [];
  const table = el('table'); table.id = 'results';
  const head = el('tr'); for (const v of vars) head.append(el('th', '?' + v));
  const thead = el('thead'); thead.append(head);
  const tbody = el('tbody');
  for (const r of rows) { const tr = el('tr'); for (const v of vars) tr.append(el('td', term(r[v]))); tbody.append(tr); }
  table.append(thead, tbody);
  const wrap = el('div'); wrap.className = 'wide'; wrap.append(table);
  out.append(wrap);
  return rows.length + (rows.length === 1 ? ' row' : ' rows');
}
async function run() {
  const t = targets.find((x) => x.id === $('endpoint').value);
  if (!q.value.trim()) { status('type a query first', true); return; }
  $('run').disabled = true;
  status('running on ' + t.url + ' …');
  const t0 = performance.now();
  try {
    const res = await fetch(t.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/sparql-results+json, application/n-triples;q=0.9' }, body: 'query=' + encodeURIComponent(q.value) });
    const text = await res.text();
    const ms = Math.round(performance.now() - t0);
    if (!res.ok) { $('output').replaceChildren(); status('HTTP ' + res.status + ' from ' + t.url + ' (' + ms + ' ms): ' + text.trim(), true); return; }
    const type = (res.headers.get('content-type') || '').split(';')[0].trim();
    if (type === 'application/sparql-results+json') status(show(JSON.parse(text)) + ' (' + ms + ' ms)');
    else { const pre = el('pre', text); pre.id = 'graph'; $('output').replaceChildren(pre); status(text.split('\\n').filter((l) => l.trim()).length + ' triples (' + ms + ' ms)'); }
  } catch (e) {
    status('no answer from ' + t.url + ': ' + (e && e.message ? e.message : e), true);
  } finally {
    $('run').disabled = false;
  }
}
$('run').addEventListener('click', run);
q.addEventListener('keydown', (e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); run(); } });
document.body.dataset.ready = 'true';
})();`;

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64');
const SCRIPT_HASH = sha256(SCRIPT);
const STYLE_HASH = sha256(STYLE);

/** Escapes text for HTML content. */

/** The page and the headers it is served with. */
interface QueryPage {
  html: string;
  /** `Content-Security-Policy` and the other headers of the page. */
  headers: Record<string, string>;
}

/**
 * The query page of a running serve (module comment).
 * @param file the serve's endpoints file (what `/` gives as JSON)
 * @param o `host`: the request's Host header, whose name the endpoints' other ports are allowed on
 *   with `--port-per-endpoint` (`portPerEndpoint`); without it only this origin is reachable
 */
export function queryPage(file: EndpointsFile, o: { host?: string; portPerEndpoint: boolean }): QueryPage {
  const data = {
    federation: FEDERATION_PATH,
    endpoints: file.endpoints.map((e) => ({ id: e.id, graph: e.graph, url: e.url, triples: e.triples })),
  };
  // JSON in a data block: `<` escaped so that no text of the data can end the block.
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const connect = ["'self'"];
  if (o.portPerEndpoint && o.host) {
    const name = o.host.replace(/:\d+$/, '');
    for (const port of new Set(file.endpoints.map((e) => new URL(e.url).port).filter(Boolean))) connect.push(`http://${name}:${port}`);
  }
  const csp = [
    "default-src 'none'",
    `script-src 'sha256-${SCRIPT_HASH}'`,
    `style-src 'sha256-${STYLE_HASH}'`,
    `connect-src ${connect.join(' ')}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  const graphs = [...new Set(file.endpoints.map((e) => e.graph))];
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>fkgqa serve: query</title>
<style>${STYLE}</style></head><body>
<h1>fkgqa serve</h1>
<p class="note">${file.endpoints.length} SPARQL endpoints of ${graphs.length} graph${graphs.length === 1 ? '' : 's'} (${esc(graphs.join(', '))}); build ${esc(file.shards)}. The endpoints file is at <code>/</code> as JSON for clients that ask for it (<code>Accept: application/json</code>).</p>
<h2>Query</h2>
<div class="bar"><label for="endpoint">send to</label> <select id="endpoint"></select></div>
<textarea id="query" spellcheck="false" aria-label="SPARQL query"></textarea>
<div class="bar"><button id="run" type="button">Run</button> <span class="note">Ctrl+Enter runs. A shard endpoint answers a query on its own triples; the federation endpoint answers a query whose SERVICE clauses name shard endpoints.</span></div>
<p id="status" role="status"></p>
<div id="output"></div>
<h2>Endpoints</h2>
<div class="wide"><table id="endpoints"><thead><tr><th>endpoint</th><th>graph</th><th>URL</th><th>triples</th><th></th></tr></thead><tbody></tbody></table></div>
<script type="application/json" id="fkgqa-endpoints">${json}</script>
<script>${SCRIPT}</script>
</body></html>
`;
  return { html, headers: { 'Content-Security-Policy': csp, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' } };
}
