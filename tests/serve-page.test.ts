/**
 * The query page of `fkgqa serve` at `/`: a browser gets a self-contained page under a restrictive
 * Content-Security-Policy, other clients keep getting the endpoints file as JSON; in headless
 * Chromium a query typed into the page and run shows its answer as a table, through the federation
 * endpoint and through a shard endpoint, without a request outside the server and without a
 * policy violation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, launchChromium } from '../scripts/chromium.js';
import { prefersHtml } from '../src/serve/routing.js';
import { demoBuild, serveProcess, tmpDir } from './helpers.js';

const NS = 'http://valuenet/ontop/';
/** What a browser sends for a page (Chromium's navigation Accept). */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

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

describe('serve / the query page at /', () => {
  it('asks for HTML only when the Accept header names text/html above JSON', () => {
    expect([BROWSER_ACCEPT, 'text/html', 'application/json;q=0.5, text/html'].map(prefersHtml)).toEqual([true, true, true]);
    expect([undefined, '', '*/*', 'application/json', 'application/json, text/html;q=0.5', 'text/html;q=0'].map(prefersHtml)).toEqual([false, false, false, false, false, false]);
  });

  it('a browser gets the page under a restrictive Content-Security-Policy; curl, fetch and JSON clients keep the endpoints file', async () => {
    const page = await fetch(`${base}/`, { headers: { Accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy')!;
    expect(csp.split('; ').map((d) => d.replace(/'sha256-[A-Za-z0-9+/=]+'/, "'sha256-…'"))).toEqual([
      "default-src 'none'",
      "script-src 'sha256-…'",
      "style-src 'sha256-…'",
      "connect-src 'self'",
      "img-src 'none'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ]);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    // Self-contained: nothing to load (no src or href at all), every endpoint named.
    expect(html).not.toMatch(/\s(src|href)=/);
    for (const u of Object.values(url)) expect(html).toContain(u);
    for (const accept of [undefined, '*/*', 'application/json']) {
      const r = await fetch(`${base}/`, accept ? { headers: { Accept: accept } } : {});
      expect([r.status, r.headers.get('content-type')]).toEqual([200, 'application/json']);
      expect(((await r.json()) as { endpoints: unknown[] }).endpoints).toHaveLength(8);
    }
  });

  it.skipIf(!CHROMIUM)('in headless Chromium: a query typed and run shows its rows (7 through the federation endpoint, 8 on library-shard4), nothing loaded from elsewhere, no policy violation', async () => {
    const browser = await launchChromium();
    try {
      for (const width of [1400, 800]) {
        const p = await browser.open(`${base}/`, { width, height: 900, beforeLoad: "window.__violations = []; document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));" });
        await p.waitFor('document.body.dataset.ready');
        // The endpoints listed: the federation endpoint, then the 8 shard endpoints.
        expect(await p.evaluate(`[...document.querySelectorAll('#endpoint option')].map((o) => o.value)`)).toEqual(['federation', ...Object.keys(url)]);
        // Authors joined with their books through three shards: 7 rows (tests/query.test.ts).
        const join = `SELECT ?name ?title WHERE { SERVICE <${url['library-shard1']}> { ?a <${NS}author#name> ?name } SERVICE <${url['library-shard4']}> { ?b <${NS}book#ref-author_id> ?a } SERVICE <${url['library-shard2']}> { ?b <${NS}book#title> ?title } } ORDER BY ?title`;
        await p.type('#query', join);
        await p.click('#run');
        await p.waitFor(`document.querySelector('#results') || document.querySelector('#status.error')`);
        expect([await p.evaluate(`document.querySelectorAll('#results tbody tr').length`), await p.evaluate(`document.getElementById('status').textContent`)]).toEqual([7, expect.stringMatching(/^7 rows \(\d+ ms\)$/)]);
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
  }, 180_000);
});
