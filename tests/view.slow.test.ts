/**
 * The viewer's page in headless Chromium (a browser start goes to `npm run test:slow`; 15 s of wall
 * at load 10): a deep link opens a run, a click filters, a click on the list opens a run.
 * tests/view.test.ts checks the page's data and verdicts without a browser.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShardServer } from '../src/serve/server.js';
import { viewRuns } from '../src/view/view.js';
// @ts-expect-error plain JS helper without types
import { CHROMIUM, launchChromium } from '../scripts/chromium.js';
import { tmpDir } from './helpers.js';
import { viewFixture } from './view-fixture.js';

const dir = tmpDir('fkgqa-view-');
let build: string;
let server: ShardServer;
let oracleFile: string;
let wrongFile: string;

beforeAll(async () => {
  ({ build, server, oracleFile, wrongFile } = await viewFixture(dir));
}, 300_000);

afterAll(async () => {
  await server?.close();
});

describe.skipIf(!CHROMIUM)('view / in headless Chromium', () => {
  it('opens a run by deep link, filters by a click, opens a run by a click on the list', async () => {
    const files = [oracleFile, wrongFile];
    const page = await viewRuns({ runs: files, shards: build });
    const file = path.join(dir, 'page.html');
    fs.writeFileSync(file, page.html);
    const lostId = page.data.runs.find((r) => r.who === 'lost-row')!.id;
    expect(lostId).toMatch(/^baseline\|lost-row\|2\|r0\|[0-9a-f]{8}$/);
    const browser = await launchChromium();
    try {
      const p = await browser.open(`file://${file}#run=${encodeURIComponent(lostId)}`);
      await p.waitFor('document.body.dataset.ready');
      // The deep link opened the run, with score's reason and the lost gold row marked.
      expect(await p.evaluate('document.body.dataset.openRun')).toBe(lostId);
      expect(await p.evaluate("document.getElementById('verdict').textContent")).toBe('wrong');
      expect(await p.evaluate("document.getElementById('reason').textContent")).toBe('1 row where gold has 2');
      expect(await p.evaluate("document.querySelectorAll('#gold tr.m-m').length")).toBe(1);
      expect(await p.evaluate("document.querySelectorAll('#answer tr').length")).toBe(2); // header + 1 row
      // SERVICE targets highlighted in the final query: the needed shards of library/q2.
      expect(await p.evaluate("[...new Set([...document.querySelectorAll('#detail pre.sparql .svc')].map((e) => e.title))].sort().join(' ')")).toBe('library-shard1');
      // A scripted run: no LLM calls in its details, '—' in the list's llm column.
      expect(await p.evaluate("document.getElementById('detail').textContent")).toContain('scripted agent (no LLM), ');
      expect(await p.evaluate("document.getElementById('detail').textContent")).not.toContain('LLM calls');
      expect(await p.evaluate("[...new Set([...document.querySelectorAll('#rows tr.run td:nth-child(5)')].map((e) => e.textContent))].join(' ')")).toBe('—');
      await p.screenshot(path.join(dir, 'view-deep-link.png'));
      expect(await p.evaluate('document.body.dataset.runsMatching')).toBe('14');
      // A click on the "wrong" quick filter: 6 runs listed.
      await p.click('button.quick[data-value="wrong"]');
      await p.waitFor("document.body.dataset.runsMatching !== '14'");
      expect(await p.evaluate('document.body.dataset.runsMatching')).toBe('6');
      expect(await p.evaluate("document.querySelectorAll('#rows tr.run').length")).toBe(6);
      expect(await p.evaluate("document.getElementById('count').textContent")).toBe('showing 6 of 6 matching runs (14 in all)');
      // A click on the last listed run opens it and puts it in the address.
      const lastId = await p.evaluate(
        "(() => { const trs = document.querySelectorAll('#rows tr.run'); return JSON.parse(document.getElementById('fkgqa-data').textContent).runs[Number(trs[trs.length - 1].dataset.i)].id; })()",
      );
      await p.click('#rows tr.run:last-child');
      await p.waitFor(`document.body.dataset.openRun === ${JSON.stringify(lastId)}`);
      expect(await p.evaluate('decodeURIComponent(location.hash)')).toBe(`#run=${lastId}`);
      expect(await p.evaluate("document.querySelectorAll('#rows tr.sel').length")).toBe(1);
      // The graph filter: a select, as a user picks it.
      await p.select('#f-end', 'cancelled');
      await p.waitFor("document.body.dataset.runsMatching !== '6'");
      expect(await p.evaluate('document.body.dataset.runsMatching')).toBe('1');
      await p.screenshot(path.join(dir, 'view-filtered.png'));
    } finally {
      await browser.close();
    }
  }, 120_000);
});
