#!/usr/bin/env node
/**
 * The size and speed of the `fkgqa view` page for many runs (`npm run bench:view -- --runs FILE
 * --shards BUILD [--n 1000] [--out DIR]`): the run records of FILE (real runs of fkgqa eval on
 * BUILD) are repeated as further repeats (`r1`, `r2`, …; every fifth one with a row of its final
 * answer dropped, so wrong runs are marked) until there are N runs; then the page is made (time),
 * its size measured, and it is opened in headless Chromium: time to the list drawn (load, parse the
 * data, draw 200 rows; the page's own figure and the wall time from navigation), time to open a
 * run by its deep link, time of a filter click. Prints one JSON object, with the load average.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { view } from '../dist/index.js';
import { launchChromium } from '../scripts/chromium.js';

const { values: a } = parseArgs({ options: { runs: { type: 'string' }, shards: { type: 'string' }, n: { type: 'string', default: '1000' }, out: { type: 'string' } } });
if (!a.runs || !a.shards) {
  process.stderr.write('usage: npm run bench:view -- --runs FILE --shards BUILD [--n 1000] [--out DIR]\n');
  process.exit(2);
}
const n = Number(a.n);
const out = a.out ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-bench-view-'));
fs.mkdirSync(out, { recursive: true });
const templates = fs
  .readFileSync(a.runs, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const lines = [];
for (let i = 0; lines.length < n; i++) {
  const r = structuredClone(templates[i % templates.length]);
  const repeat = Math.floor(i / templates.length);
  r.repeat = repeat;
  r.id = r.id.replace(/\|r\d+$/, `|r${repeat}`);
  if (i % 5 === 4 && r.final?.results?.results?.bindings?.length > 1) r.final.results.results.bindings.pop();
  lines.push(JSON.stringify(r));
}
const runFile = path.join(out, `runs-${n}.jsonl`);
fs.writeFileSync(runFile, lines.join('\n') + '\n');
const load = () => os.loadavg().map((x) => Math.round(x * 10) / 10);
const loadBefore = load();
let t = performance.now();
const page = await view({ runs: [runFile], shards: a.shards });
const makeMs = performance.now() - t;
const file = path.join(out, 'view.html');
fs.writeFileSync(file, page.html);
const browser = await launchChromium();
const figures = [];
try {
  for (let k = 0; k < 3; k++) {
    t = performance.now();
    const p = await browser.open(`file://${file}`);
    await p.waitFor('document.body.dataset.ready');
    const wallMs = performance.now() - t;
    const renderMs = Number(await p.evaluate('document.body.dataset.renderMs'));
    const id = page.data.runs[Math.floor(page.data.runs.length / 2)].id;
    const openMs = await p.evaluate(
      `(() => { const t = performance.now(); location.hash = 'run=' + encodeURIComponent(${JSON.stringify(id)}); window.dispatchEvent(new HashChangeEvent('hashchange')); return performance.now() - t; })()`,
    );
    t = performance.now();
    await p.click('button.quick[data-value="wrong"]');
    await p.waitFor(`document.body.dataset.runsMatching === '${page.verdicts.wrong}'`);
    const filterMs = performance.now() - t;
    if (k === 0) await p.screenshot(path.join(out, 'view-1000.png'));
    figures.push({ wallMs: Math.round(wallMs), renderMs, openRunMs: Math.round(openMs), filterClickMs: Math.round(filterMs) });
  }
} finally {
  await browser.close();
}
const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
process.stdout.write(
  JSON.stringify(
    {
      runs: page.runs,
      verdicts: page.verdicts,
      runFileBytes: fs.statSync(runFile).size,
      pageBytes: Buffer.byteLength(page.html),
      makeMs: Math.round(makeMs),
      chromium: { trials: figures, median: Object.fromEntries(Object.keys(figures[0]).map((k) => [k, median(figures.map((f) => f[k]))])) },
      page: file,
      screenshot: path.join(out, 'view-1000.png'),
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      loadBefore,
      loadAfter: load(),
    },
    null,
    2,
  ) + '\n',
);
