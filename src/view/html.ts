/**
 * The HTML of `fkgqa view`: one self-contained page (no network, no server: it opens from disk),
 * the data embedded as JSON (src/view/model.ts) and rendered on demand by the script below: the
 * run list shows 200 matching runs at a time, a run's detail is parsed and drawn when it is opened.
 *
 * For rendering checks in headless browsers the page sets, on `<body>`: `data-ready="1"` once the
 * list is drawn, `data-runs-matching` (runs passing the filters), `data-runs-listed` (rows drawn),
 * `data-open-run` (the id of the run shown) and `data-render-ms` (data parsed and list drawn, ms
 * after the script started).
 */
import type { ViewData } from './model.js';
import { counted, esc } from '../common/strings.js';

/** The embedded data as script text: JSON with every `<` escaped, so no `</script>` can end it. */
function embed(data: ViewData): string {
  return JSON.stringify(data)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const STYLE = `
*{box-sizing:border-box}
body{font:13px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{padding:10px 16px;background:#fff;border-bottom:1px solid #ddd}
header h1{font-size:17px;margin:0 0 4px}
.filters{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin-top:6px}
.filters label{display:flex;gap:4px;align-items:center}
main{display:grid;grid-template-columns:minmax(340px,40%) 1fr;height:calc(100vh - 96px)}
#list{overflow:auto;border-right:1px solid #ddd;background:#fff}
#list table{border-collapse:collapse;width:100%}
#list td,#list th{padding:3px 6px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
#list th{position:sticky;top:0;background:#f3f3f3;font-weight:600}
#list tr.run{cursor:pointer}#list tr.run:hover{background:#eef4ff}#list tr.sel{background:#dce8ff}
#list .q{max-width:220px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#list .muted{font-size:11px}
#more{margin:8px}
#detail{overflow:auto;padding:12px 18px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;font-weight:600;white-space:nowrap}
.v-correct{background:#d7f5dd;color:#145a22}.v-wrong{background:#fbdada;color:#8a1212}.v-unscored{background:#e6e6e6;color:#444}
.end{background:#eef;color:#224}
button.quick{border:1px solid #bbb;cursor:pointer;margin-right:4px}
.meta{color:#555}.meta span{margin-right:12px}
.msg{border:1px solid #ddd;border-radius:6px;margin:8px 0;background:#fff}
.msg>.h{padding:3px 8px;background:#f4f4f4;border-bottom:1px solid #e4e4e4;font-size:12px;color:#444}
.msg>.b{padding:6px 8px}
.msg.user>.h{background:#eaf2ff}.msg.assistant>.h{background:#f0ecff}.msg.tool>.h{background:#eef7ee}.msg.err>.h{background:#fde8e8}
pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
pre.sparql{background:#fbfbf6;border:1px solid #eee;padding:6px}
.kw{color:#7a2d9c;font-weight:600}.var{color:#0b6e69}.iri{color:#1f4e9c}.str{color:#9a5b00}.cmt{color:#888}
.svc{font-weight:700;border-radius:3px;padding:0 2px}
table.ans{border-collapse:collapse;margin:4px 0;font:12px ui-monospace,Menlo,monospace}
table.ans td,table.ans th{border:1px solid #ddd;padding:1px 5px;text-align:left;vertical-align:top}
table.ans th{background:#f3f3f3}
tr.m-m td{background:#fbdada}tr.m-x td{background:#ffe6c7}tr.m-o td{background:#fff4b8}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:14px}
.box{border:1px solid #ddd;border-radius:6px;padding:6px 10px;background:#fff;margin:8px 0}
.box.correct{border-color:#79c48a}.box.wrong{border-color:#e08a8a}
.legend span{margin-right:10px}
.muted{color:#777}
h2{font-size:16px;margin:6px 0}h3{font-size:14px;margin:14px 0 4px}
`;

/** The page script (plain ES2020, no template literals: it lives in one). */
const SCRIPT = `
'use strict';
const t0 = performance.now();
const D = JSON.parse(document.getElementById('fkgqa-data').textContent);
const RUNS = D.runs;
const byId = new Map(RUNS.map(function (r, i) { return [r.id, i]; }));
const FILTERS = [['setup', 'setup'], ['who', 'model or agent'], ['cond', 'condition'], ['kg', 'graph'], ['verdict', 'verdict'], ['end', 'end reason']];
const PAGE = 200;
const state = { f: {}, text: '', shown: PAGE, open: null };
const $ = function (id) { return document.getElementById(id); };
const h = function (s) { return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;'); };
const PREFIXES = [['rdf:', 'http://www.w3.org/1999/02/22-rdf-syntax-ns#'], ['rdfs:', 'http://www.w3.org/2000/01/rdf-schema#'], ['xsd:', 'http://www.w3.org/2001/XMLSchema#'], ['owl:', 'http://www.w3.org/2002/07/owl#']];
const PALETTE = ['#cfe3ff', '#ffd9b3', '#d4f2d4', '#f7d0f0', '#fff0a8', '#d9d4ff', '#c9f0ee', '#f5cccc'];

function buildFilters() {
  const box = $('filters');
  FILTERS.forEach(function (f) {
    const counts = new Map();
    RUNS.forEach(function (r) { counts.set(r[f[0]], (counts.get(r[f[0]]) || 0) + 1); });
    const values = Array.from(counts.keys()).sort();
    const sel = document.createElement('select');
    sel.id = 'f-' + f[0];
    sel.innerHTML = '<option value="">all (' + RUNS.length + ')</option>' + values.map(function (v) { return '<option value="' + h(v) + '">' + h(v) + ' (' + counts.get(v) + ')</option>'; }).join('');
    sel.addEventListener('change', function () { state.f[f[0]] = sel.value; state.shown = PAGE; drawList(); });
    const lab = document.createElement('label');
    lab.textContent = f[1];
    lab.appendChild(sel);
    box.appendChild(lab);
  });
  // Quick filters: one button per verdict.
  const quick = document.createElement('span');
  ['correct', 'wrong', 'unscored'].forEach(function (v) {
    const n = RUNS.filter(function (r) { return r.verdict === v; }).length;
    if (!n) return;
    const b = document.createElement('button');
    b.className = 'quick badge v-' + v; b.dataset.filter = 'verdict'; b.dataset.value = v; b.textContent = v + ' (' + n + ')';
    b.addEventListener('click', function () { const sel = $('f-verdict'); sel.value = sel.value === v ? '' : v; state.f.verdict = sel.value; state.shown = PAGE; drawList(); });
    quick.appendChild(b);
  });
  box.appendChild(quick);
  const lab = document.createElement('label');
  lab.textContent = 'search';
  const inp = document.createElement('input');
  inp.id = 'f-text'; inp.type = 'search'; inp.placeholder = 'question, id or query id'; inp.size = 28;
  inp.addEventListener('input', function () { state.text = inp.value.toLowerCase(); state.shown = PAGE; drawList(); });
  lab.appendChild(inp);
  box.appendChild(lab);
}

function matching() {
  const out = [];
  for (let i = 0; i < RUNS.length; i++) {
    const r = RUNS[i];
    let ok = true;
    for (let k = 0; k < FILTERS.length && ok; k++) { const v = state.f[FILTERS[k][0]]; if (v && r[FILTERS[k][0]] !== v) ok = false; }
    if (ok && state.text && (r.text + ' ' + r.id + ' ' + r.q).toLowerCase().indexOf(state.text) < 0) ok = false;
    if (ok) out.push(i);
  }
  return out;
}

function drawList() {
  const m = matching();
  const rows = m.slice(0, state.shown).map(function (i) {
    const r = RUNS[i];
    return '<tr class="run' + (state.open === r.id ? ' sel' : '') + '" data-i="' + i + '"><td><span class="badge v-' + r.verdict + '">' + r.verdict + '</span></td><td>' + h(r.q) + '<div class="muted">' + h(r.cond) + '</div></td><td class="q" title="' + h(r.text) + '">' + h(r.text) + '</td><td><span class="badge end">' + h(r.end) + '</span></td><td>' + (r.llm === null ? '—' : r.llm) + '</td><td>' + r.s + '</td></tr>';
  });
  $('rows').innerHTML = rows.join('');
  $('count').textContent = 'showing ' + Math.min(m.length, state.shown) + ' of ' + m.length + ' matching runs (' + RUNS.length + ' in all)';
  const more = $('more');
  more.style.display = m.length > state.shown ? '' : 'none';
  more.textContent = 'show ' + Math.min(PAGE, m.length - state.shown) + ' more';
  document.body.dataset.runsMatching = String(m.length);
  document.body.dataset.runsListed = String(Math.min(m.length, state.shown));
}

// SPARQL: tokens, re-indented by brace depth, keywords, variables, IRIs and SERVICE targets marked.
const KEYWORDS = /^(SELECT|DISTINCT|REDUCED|WHERE|SERVICE|SILENT|FILTER|OPTIONAL|UNION|MINUS|GRAPH|BIND|VALUES|AS|ORDER|BY|GROUP|HAVING|LIMIT|OFFSET|ASK|CONSTRUCT|DESCRIBE|PREFIX|BASE|NOT|EXISTS|IN|COUNT|SUM|AVG|MIN|MAX|SAMPLE|GROUP_CONCAT|ASC|DESC|a)$/i;
function tokens(q) {
  const re = /("""[\\s\\S]*?"""|'''[\\s\\S]*?'''|"(?:[^"\\\\\\n]|\\\\.)*"|'(?:[^'\\\\\\n]|\\\\.)*'|<[^<>"{}|^\\x60\\\\\\s]*>|#[^\\n]*|[{}]|\\s+|[?$][A-Za-z0-9_\\u00b7-\\uffff]+|[A-Za-z_][A-Za-z0-9_-]*(?::[^\\s{}().,;]*)?|:[^\\s{}().,;]*|\\.(?!\\d)|[^\\s{}])/g;
  const out = []; let m;
  while ((m = re.exec(q)) !== null) out.push(m[0]);
  return out;
}
function sparqlHtml(q, endpoints) {
  const shardOf = new Map((endpoints || []).map(function (e, i) { return [e.url, i]; }));
  const toks = tokens(q);
  let out = '', depth = 0, line = '', lines = [], prevKw = '';
  const flush = function () { if (line.trim()) lines.push('  '.repeat(Math.max(0, depth)) + line.trim()); line = ''; };
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (/^\\s+$/.test(t)) { if (line && !/ $/.test(line)) line += ' '; continue; }
    if (t === '{') { line += '{'; flush(); depth++; prevKw = ''; continue; }
    if (t === '}') { flush(); depth--; line = '}'; flush(); prevKw = ''; continue; }
    if (t.charAt(0) === '#') { line += '<span class="cmt">' + h(t) + '</span>'; flush(); continue; }
    let html;
    if (t.charAt(0) === '<' && t.length > 1 && t.charAt(t.length - 1) === '>') {
      const iri = t.slice(1, -1);
      if (prevKw === 'SERVICE' || prevKw === 'SILENT') {
        const k = shardOf.has(iri) ? shardOf.get(iri) : -1;
        const ep = k >= 0 ? endpoints[k] : null;
        html = '<span class="svc" data-service="' + h(iri) + '" style="background:' + (k >= 0 ? PALETTE[k % PALETTE.length] : '#f6c2c2') + '" title="' + (ep ? h(ep.id) : 'not an endpoint of this graph') + '">' + h(t) + '</span>';
      } else html = '<span class="iri">' + h(t) + '</span>';
    } else if (t.charAt(0) === '"' || t.charAt(0) === "'") html = '<span class="str">' + h(t) + '</span>';
    else if (t.charAt(0) === '?' || t.charAt(0) === '$') html = '<span class="var">' + h(t) + '</span>';
    else if (KEYWORDS.test(t)) html = '<span class="kw">' + h(t) + '</span>';
    else html = h(t);
    prevKw = KEYWORDS.test(t) ? t.toUpperCase() : '';
    line += html;
    if (t === '.' || t === ';') { flush(); }
    else if (/^(PREFIX|BASE)$/i.test(t)) { /* declaration continues */ }
  }
  flush();
  // PREFIX declarations end at their IRI: one per line.
  return lines.join('\\n').replace(/(<span class="iri">[^<]*<\\/span>) (?=<span class="kw">(?:PREFIX|SELECT|ASK|CONSTRUCT|DESCRIBE|BASE))/g, '$1\\n');
}

function shortIri(iri) {
  for (let k = 0; k < PREFIXES.length; k++) if (iri.indexOf(PREFIXES[k][1]) === 0) return PREFIXES[k][0] + iri.slice(PREFIXES[k][1].length);
  return '<' + iri + '>';
}
function termHtml(c) {
  if (c === '') return '<span class="muted">—</span>';
  if (c.charAt(0) === '<') { const iri = c.slice(1, -1); return '<span class="iri" title="' + h(iri) + '">' + h(shortIri(iri)) + '</span>'; }
  if (c.charAt(0) === '_') return '<span class="muted">' + h(c) + '</span>';
  const end = c.lastIndexOf('"');
  let lex; try { lex = JSON.parse(c.slice(0, end + 1)); } catch (e) { lex = c; }
  const rest = c.slice(end + 1);
  if (rest.charAt(0) === '@') return h(lex) + '<span class="muted">' + h(rest) + '</span>';
  if (rest.indexOf('^^') === 0) return '<span title="' + h(rest.slice(3, -1)) + '">' + h(lex) + '</span>';
  return h(lex);
}
function tableHtml(t, marks) {
  if (!t) return '';
  if (t.boolean !== undefined) return '<p>ASK answer: <b>' + t.boolean + '</b></p>';
  const mk = marks || t.marks || [];
  let s = '<table class="ans"><tr><th>#</th>' + t.vars.map(function (v) { return '<th>?' + h(v) + '</th>'; }).join('') + '</tr>';
  t.rows.forEach(function (row, i) {
    s += '<tr' + (mk[i] ? ' class="m-' + mk[i] + '"' : '') + '><td class="muted">' + (i + 1) + '</td>' + row.map(function (c) { return '<td>' + termHtml(c) + '</td>'; }).join('') + '</tr>';
  });
  s += '</table>';
  if (t.n > t.rows.length) s += '<p class="muted">' + t.rows.length + ' of ' + t.n + ' rows shown</p>';
  else s += '<p class="muted">' + t.n + ' row' + (t.n === 1 ? '' : 's') + '</p>';
  return s;
}
function queryOf(args) { try { const a = JSON.parse(args); return a && typeof a.query === 'string' ? a.query : null; } catch (e) { return null; } }
function queryBlock(q, endpoints) {
  return '<pre class="sparql">' + sparqlHtml(q, endpoints) + '</pre><details><summary class="muted">as sent</summary><pre>' + h(q) + '</pre></details>';
}

function drawRun(id) {
  const i = byId.get(id);
  const box = $('detail');
  state.open = id;
  document.body.dataset.openRun = id;
  Array.prototype.forEach.call(document.querySelectorAll('#rows tr.run'), function (tr) { tr.classList.toggle('sel', RUNS[Number(tr.dataset.i)].id === id); });
  if (i === undefined) { box.innerHTML = '<p>No run with id <code>' + h(id) + '</code> in this page.</p>'; document.body.dataset.openRun = ''; return; }
  const r = JSON.parse(D.details[i]);
  const s = RUNS[i];
  const eps = r.endpoints;
  let out = '<h2>' + h(r.question.text) + '</h2>';
  out += '<p class="meta"><span><span class="badge v-' + s.verdict + '" id="verdict">' + s.verdict + '</span></span><span class="badge end">' + h(r.endReason) + '</span> <span>' + h(r.id) + '</span><span>' + h(r.question.queryId) + ' (question ' + r.question.index + ')</span><span>' + h(r.setup) + ' | ' + h(s.who) + '</span></p>';
  out += '<p class="meta"><span>' + (r.ms / 1000).toFixed(1) + ' s</span><span>' + (r.agent === 'llm' ? r.counts.llmCalls + ' LLM calls, ' : 'scripted agent (no LLM), ') + r.counts.toolCalls + ' tool calls (' + r.counts.sparqlCalls + ' SPARQL, ' + r.counts.voidCalls + ' VoID), ' + r.counts.retries + ' retries</span><span>' + r.usage.totalTokens + ' tokens</span><span>' + h(r.file) + ', line ' + r.line + ' (' + h(r.format) + ')</span></p>';
  const extra = [];
  if (r.model) extra.push('model ' + h(r.model) + (r.baseUrl ? ' at ' + h(r.baseUrl) : '') + ', temperature ' + r.temperature + (r.seed !== null ? ', seed ' + r.seed : ''));
  if (r.condition) out += '<p class="meta" id="condition"><span>condition ' + h(r.condition.digest.slice(0, 8)) + ': ' + h(r.condition.label) + '</span><span>' + r.condition.fields.map(function (f) { return h(f[0]) + '=' + h(f[1]); }).join(', ') + '</span></p>';
  extra.push('prompt ' + h(r.prompt.name) + ' (' + h(String(r.prompt.sha256).slice(0, 12)) + ')');
  extra.push('tools (' + h(r.tools.source) + '): ' + h(r.tools.names.join(', ')));
  if (r.toolSurface) extra.push('tool surface ' + h(r.toolSurface.digest) + ' (' + r.toolSurface.tools + ' tools)');
  if (r.build) extra.push('build ' + h(String(r.build.outputDigest).slice(0, 16)) + ', gold ' + h(r.build.goldDigest ? String(r.build.goldDigest).slice(0, 16) : 'none'));
  out += '<p class="meta">' + extra.map(function (x) { return '<span>' + x + '</span>'; }).join('') + '</p>';
  if (r.infrastructure) out += '<div class="box wrong"><b>Infrastructure error</b> (not the agent\\'s fault): ' + h(r.infrastructure.what) + (r.infrastructure.endpoint ? ' — ' + h(r.infrastructure.endpoint) : '') + (r.infrastructure.step !== undefined ? ' (step ' + r.infrastructure.step + ')' : '') + '</div>';
  if (r.error) out += '<div class="box wrong"><b>Error:</b> ' + h(r.error) + '</div>';
  if (r.cancelReason) out += '<div class="box"><b>Cancelled:</b> ' + h(r.cancelReason) + '</div>';
  if (r.score) {
    const sc = r.score;
    out += '<div class="box ' + (sc.correct ? 'correct' : 'wrong') + '" id="verdict-box"><b>' + (sc.correct ? 'Correct' : 'Wrong') + '</b>' + (sc.correct ? (sc.byTies ? ' (through ties under ORDER BY)' : '') : ': <span id="reason">' + h(sc.reason || '') + '</span>') +
      '<div class="meta"><span>F1 (GRASP) ' + sc.graspF1 + '</span><span>F1 (Spinach) ' + sc.spinachF1 + '</span><span>gold: ' + h(sc.gold) + '</span>' +
      '<span>needed shards: ' + (sc.neededShards ? h(sc.neededShards.join(' ')) : 'unknown') + '</span><span>consulted: ' + (sc.consultedShards ? h(sc.consultedShards.join(' ')) : '—') + '</span>' +
      (sc.consultedAllNeeded !== null ? '<span>' + (sc.consultedAllNeeded ? 'every needed shard consulted' : 'a needed shard was not consulted') + '</span>' : '') +
      (sc.trivial ? '<span>trivial federation (all shards, fewer suffice)</span>' : '') + (sc.foreignTargets.length ? '<span>foreign SERVICE targets: ' + h(sc.foreignTargets.join(' ')) + '</span>' : '') + '</div></div>';
  } else out += '<div class="box"><b>Not scored</b> <span class="muted">(' + (D.build ? 'fkgqa score leaves this run out' : 'the page was made without --shards') + ')</span></div>';
  out += '<p class="meta">endpoints: ' + eps.map(function (e, k) { return '<span class="svc" style="background:' + PALETTE[k % PALETTE.length] + '">' + h(e.shard) + '</span> ' + h(e.url); }).join(' &nbsp; ') + '</p>';

  const gold = D.gold[r.question.queryId];
  const diffNote = r.final && r.final.missing !== undefined ? '<p class="legend" id="diff-counts"><span class="badge v-wrong">' + r.final.missing + ' gold rows missing</span><span class="badge" style="background:#ffe6c7">' + r.final.extra + ' extra rows</span>' + (gold && gold.ordered ? '<span class="badge" style="background:#fff4b8">ordered: rows at other positions</span>' : '') + '</p>' : '';
  out += diffNote + '<div class="pair"><div><h3>Answer of the final query</h3><div id="answer">' + (r.final && r.final.answer ? tableHtml(r.final.answer) : '<p class="muted">none</p>') + '</div></div>';
  out += '<div><h3>Gold answer' + (gold && gold.ordered ? ' (ordered)' : '') + '</h3><div id="gold">' + (gold ? (gold.answer ? tableHtml(gold.answer, r.goldMarks) : '<p class="muted">no gold answer (' + h(gold.status) + (gold.error ? ': ' + h(gold.error) : '') + ')</p>') : '<p class="muted">not known (made without --shards)</p>') + '</div></div></div>';
  if (gold) out += '<details><summary>gold query ' + h(r.question.queryId) + '</summary><pre class="sparql">' + sparqlHtml(gold.query, []) + '</pre></details>';
  out += '<h3>Final query</h3>';
  if (r.finalQuery === null) out += '<p class="muted">Nothing submitted.</p>';
  else {
    out += queryBlock(r.finalQuery, eps);
    if (r.final) out += '<p class="meta"><span>executed by the harness: ' + h(r.final.status) + '</span>' + (r.final.route ? '<span>route ' + h(r.final.route) + '</span>' : '') + '<span>' + r.final.ms + ' ms</span>' + (r.final.error ? '<span>' + h(r.final.error) + '</span>' : '') + '</p>';
  }

  out += '<h3>Conversation (' + r.messages.length + ' messages)</h3>';
  r.messages.forEach(function (m) {
    if (m.r === 'system') { out += '<details class="msg"><summary class="h">system prompt (' + D.shared[m.shared].length + ' characters)</summary><div class="b"><pre>' + h(D.shared[m.shared]) + '</pre></div></details>'; return; }
    if (m.r === 'user') { out += '<div class="msg user"><div class="h">user</div><div class="b"><pre>' + h(m.t) + '</pre></div></div>'; return; }
    if (m.r === 'assistant') {
      let b = m.t ? '<pre>' + h(m.t) + '</pre>' : '';
      m.calls.forEach(function (c) {
        const q = queryOf(c.args);
        b += '<div><b>' + h(c.name) + '</b> <span class="muted">' + h(c.id) + '</span>' + (q !== null ? queryBlock(q, eps) : '<pre>' + h(c.args) + '</pre>') + '</div>';
      });
      out += '<div class="msg assistant"><div class="h">assistant' + (m.turn ? ' · turn ' + m.turn + ' · ' + m.ms + ' ms · ' + m.tokens + ' tokens' + (m.finish ? ' · ' + h(m.finish) : '') + (m.retries ? ' · ' + m.retries + ' retries' : '') : '') + '</div><div class="b">' + b + '</div></div>';
      return;
    }
    out += '<div class="msg tool' + (m.err ? ' err' : '') + '"><div class="h">' + h(m.name) + (m.err ? ' · error' : '') + (m.ms !== undefined ? ' · ' + m.ms + ' ms' : '') + (m.ep ? ' · ' + h(m.ep.map(function (u) { const e = eps.find(function (x) { return x.url === u; }); return e ? e.shard : u; }).join(' ')) : '') + '</div><div class="b">' + (m.table ? '<div class="muted">' + h(m.note) + '</div>' + tableHtml(m.table) : '<pre>' + h(m.t) + '</pre>') + '</div></div>';
  });
  r.llmErrors.forEach(function (e) { out += '<div class="msg err"><div class="h">LLM call failed · turn ' + e.turn + ' · ' + e.retries + ' retries</div><div class="b"><pre>' + h(e.error) + '</pre></div></div>'; });
  box.innerHTML = out;
  box.scrollTop = 0;
}

function fromHash() {
  const m = /^#run=(.*)$/.exec(location.hash);
  if (m) { let id; try { id = decodeURIComponent(m[1]); } catch (e) { id = m[1]; } drawRun(id); }
}

buildFilters();
$('rows').addEventListener('click', function (ev) {
  const tr = ev.target.closest('tr.run');
  if (tr) location.hash = 'run=' + encodeURIComponent(RUNS[Number(tr.dataset.i)].id);
});
$('more').addEventListener('click', function () { state.shown += PAGE; drawList(); });
window.addEventListener('hashchange', fromHash);
drawList();
fromHash();
document.body.dataset.renderMs = String(Math.round(performance.now() - t0));
document.body.dataset.ready = '1';
`;

/**
 * The page (module comment).
 * @param data the runs, their details and the gold answers (src/view/model.ts)
 */
export function formatViewHtml(data: ViewData): string {
  const verdicts = { correct: 0, wrong: 0, unscored: 0 };
  for (const r of data.runs) verdicts[r.verdict]++;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>fkgqa view: ${counted(data.runs.length, 'run')}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${STYLE}</style></head><body>
<header><h1>fkgqa view</h1>
<div class="meta"><span>${counted(data.runs.length, 'run')} from ${esc(data.files.join(', '))}</span><span>${data.build ? `build ${esc(data.build)}; verdicts of fkgqa score: ${verdicts.correct} correct, ${verdicts.wrong} wrong${verdicts.unscored ? `, ${verdicts.unscored} unscored` : ''}` : 'not scored (made without --shards)'}</span><span id="count"></span></div>
<div class="filters" id="filters"></div></header>
<main><div id="list"><table><thead><tr><th>verdict</th><th>query</th><th>question</th><th>end</th><th title="LLM calls">llm</th><th title="seconds">s</th></tr></thead><tbody id="rows"></tbody></table><button id="more" style="display:none"></button></div>
<div id="detail"><p class="muted">Choose a run on the left (or add <code>#run=&lt;run id&gt;</code> to this page's address).</p></div></main>
<script type="application/json" id="fkgqa-data">${embed(data)}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
