/**
 * The query page of `fkgqa serve` at `/`: a browser gets a self-contained page under a restrictive
 * Content-Security-Policy, other clients keep getting the endpoints file as JSON. The page in
 * headless Chromium (a query typed and run shows its answer as a table) is
 * tests/serve-page.slow.test.ts: a browser start, 20 s of wall at load 10.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefersHtml } from '../src/serve/routing.js';
import { demoBuild, serveProcess, tmpDir } from './helpers.js';

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
});
