/**
 * The query page of `fkgqa serve` at `/` in a browser (a Chromium start goes to `npm run test:slow`;
 * tests/serve-page.test.ts checks the page and its headers without a browser): in headless
 * Chromium a query typed into the page and run shows its answer as a table, through the federation
 * endpoint and through a shard endpoint, without a request outside the server and without a
 * policy violation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../scripts/chromium.js';
import { demoBuild, serveProcess, tmpDir } from './helpers.js';

const NS = 'http://valuenet/ontop/';
let serve: Awaited<ReturnType<typeof serveProcess>>;
let base: string;
const url: Record<string, string> = {};

beforeAll(async () => {
  const build = await demoBuild(tmpDir('fkgqa-serve-page-'));
  serve = await serveProcess(['--shards', build, '--port', '0']);
  for (const line of serve.endpoints) {
    const [id, u] = line.split('\t');
    url[id] = u;
  }
  base = new URL(url['library-shard1']).origin;
}, 120_000);

afterAll(async () => {
  await serve?.stop();
});

describe('serve / the query page at / in a browser', () => {
  it.skipIf(!CHROMIUM)(
    'in headless Chromium: a query typed and run shows its rows (7 through the federation endpoint, 8 on library-shard4), nothing loaded from elsewhere, no policy violation',
    async () => {
      const browser = await launchChromium();
      try {
        for (const width of [1400, 800]) {
          const p = await browser.open(`${base}/`, {
            width,
            height: 900,
            beforeLoad: "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));",
          });
          await p.waitFor('document.body.dataset.ready');
          // The endpoints listed: the federation endpoint, then the 8 shard endpoints.
          expect(await p.evaluate(`[...document.querySelectorAll('#endpoint option')].map((o) => o.value)`)).toEqual(['federation', ...Object.keys(url)]);
          // Authors joined with their books through three shards: 7 rows (tests/query.test.ts).
          const join = `SELECT ?name ?title WHERE { SERVICE <${url['library-shard1']}> { ?a <${NS}author#name> ?name } SERVICE <${url['library-shard4']}> { ?b <${NS}book#ref-author_id> ?a } SERVICE <${url['library-shard2']}> { ?b <${NS}book#title> ?title } } ORDER BY ?title`;
          await p.type('#query', join);
          await p.click('#run');
          await p.waitFor(`document.querySelector('#results') || document.querySelector('#status.error')`);
          expect([await p.evaluate(`document.querySelectorAll('#results tbody tr').length`), await p.evaluate(`document.getElementById('status').textContent`)]).toEqual([
            7,
            expect.stringMatching(/^7 rows \(\d+ ms\)$/),
          ]);
          expect(await p.evaluate(`[...document.querySelectorAll('#results th')].map((t) => t.textContent)`)).toEqual(['?name', '?title']);
          // A shard endpoint: the 8 books of library-shard4.
          await p.select('#endpoint', 'library-shard4');
          await p.type('#query', `SELECT ?b WHERE { ?b a <${NS}book> }`);
          await p.click('#run');
          await p.waitFor(`/^8 rows/.test(document.getElementById('status').textContent) || document.querySelector('#status.error')`);
          expect(await p.evaluate(`document.querySelectorAll('#results tbody tr').length`)).toBe(8);
          // An error is shown as the endpoint said it, not as an empty table.
          await p.type('#query', 'SELECT WHERE');
          await p.click('#run');
          await p.waitFor(`document.querySelector('#status.error')`);
          expect(await p.evaluate(`document.getElementById('status').textContent`)).toMatch(/^HTTP 400 from /);
          expect(await p.evaluate(`document.querySelector('#results')`)).toBe(null);
          expect(await p.evaluate('window.__violations')).toEqual([]);
          const loaded = (await p.evaluate(`performance.getEntriesByType('resource').map((e) => e.name)`)) as string[];
          expect(loaded.filter((n) => !n.startsWith(`${base}/`))).toEqual([]);
          if (process.env.FKGQA_SCREENSHOTS) await p.screenshot(`${process.env.FKGQA_SCREENSHOTS}/query-page-${width}.png`, { fullPage: true });
        }
      } finally {
        await browser.close();
      }
    },
    180_000,
  );
});
