/**
 * Headless Chromium driven over the Chrome DevTools Protocol on a pipe (`--remote-debugging-pipe`:
 * JSON messages separated by NUL bytes on file descriptors 3 and 4), with no library: open a page,
 * wait for a condition, evaluate script, click, take a screenshot. Used by the rendering checks of
 * the HTML pages (tests/view.test.ts, tests/text-layout.ts) and by bench/view.js. Debian's `chromium` (apt-get install
 * chromium; .ci/run installs it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The Chromium binary, or undefined when none is installed. */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((c) => fs.existsSync(c));

/**
 * Starts headless Chromium.
 * @param {{ width?: number, height?: number }} [o] viewport in CSS pixels (default 1400 × 900)
 * @returns {Promise<{ open: (url: string) => Promise<Page>, close: () => Promise<void> }>}
 */
export async function launchChromium(o = {}) {
  if (!CHROMIUM) throw new Error('no chromium installed (apt-get install chromium)');
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'fkgqa-chromium-'));
  const child = spawn(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-quic',
      '--remote-debugging-pipe',
      `--user-data-dir=${profile}`,
      'about:blank',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const out = child.stdio[3];
  const input = child.stdio[4];
  let nextId = 1;
  const pending = new Map();
  const listeners = [];
  let buf = '';
  input.on('data', (chunk) => {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\0')) >= 0) {
      const msg = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (msg.id && pending.has(msg.id)) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
        else p.resolve(msg.result);
      } else if (msg.method) for (const l of [...listeners]) l(msg);
    }
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  exited.then(() => {
    for (const p of pending.values()) p.reject(new Error(`chromium exited: ${stderr.slice(-500)}`));
    pending.clear();
  });
  const send = (method, params = {}, sessionId) =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject, method });
      out.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  const once = (pred) =>
    new Promise((resolve) => {
      const l = (msg) => {
        if (pred(msg)) {
          listeners.splice(listeners.indexOf(l), 1);
          resolve(msg);
        }
      };
      listeners.push(l);
    });
  await send('Browser.getVersion');
  return {
    /**
     * Opens a page at `url` and waits for its load event.
     * @param {string} url
     * @param {{ width?: number, height?: number, beforeLoad?: string }} [p] this page's viewport (default the browser's),
     *   and a script run in the page before any of its own (e.g. to watch what it draws)
     */
    async open(url, p = {}) {
      const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      await send('Runtime.enable', {}, sessionId);
      await send('Emulation.setDeviceMetricsOverride', { width: p.width ?? o.width ?? 1400, height: p.height ?? o.height ?? 900, deviceScaleFactor: 1, mobile: false }, sessionId);
      if (p.beforeLoad) await send('Page.addScriptToEvaluateOnNewDocument', { source: p.beforeLoad }, sessionId);
      const loaded = once((m) => m.method === 'Page.loadEventFired' && m.sessionId === sessionId);
      await send('Page.navigate', { url }, sessionId);
      await loaded;
      return new Page(send, sessionId);
    },
    async close() {
      try {
        await Promise.race([send('Browser.close'), exited]);
      } catch {
        /* exiting */
      }
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
      // Chromium's helper processes may still write into the profile for a moment: retry, and leave it if it stays.
      try {
        fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch {
        /* a temporary folder left behind */
      }
    },
  };
}

/** A page: evaluate, wait, click, screenshot. */
export class Page {
  constructor(send, sessionId) {
    this.send = send;
    this.sessionId = sessionId;
  }

  /** The value of a script expression (awaited when it is a promise). @throws on a script exception */
  async evaluate(expression) {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, this.sessionId);
    if (r.exceptionDetails) throw new Error(`script failed: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  /** Waits until a script expression is truthy (polled in the page every 20 ms; no time limit: the caller's test has one). */
  async waitFor(expression) {
    return this.evaluate(`new Promise((resolve) => { const f = () => { const v = (${expression}); if (v) resolve(v); else setTimeout(f, 20); }; f(); })`);
  }

  /** Clicks the element matching a CSS selector (a real mouse press and release at its centre). @throws when none matches */
  async click(selector) {
    const box = await this.evaluate(
      `(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return null; e.scrollIntoView({ block: 'center' }); const r = e.getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`,
    );
    if (!box) throw new Error(`nothing matches ${selector}`);
    for (const type of ['mousePressed', 'mouseReleased']) await this.send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, this.sessionId);
  }

  /** Types text into the element matching a CSS selector as a user would: focuses it, selects what it holds, and inserts the text in its place (input events fire). */
  async type(selector, text) {
    const found = await this.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)}); if (!e) return false; e.focus(); if (e.select) e.select(); return true; })()`);
    if (!found) throw new Error(`nothing matches ${selector}`);
    await this.send('Input.insertText', { text }, this.sessionId);
  }

  /** Chooses an option of a `<select>` as a user would (sets it and fires `change`). */
  async select(selector, value) {
    await this.evaluate(`(() => { const s = document.querySelector(${JSON.stringify(selector)}); s.value = ${JSON.stringify(value)}; s.dispatchEvent(new Event('change', { bubbles: true })); })()`);
  }

  /**
   * Writes a PNG screenshot to `file`: of the viewport, or with `fullPage` of the whole page (as
   * tall as its content, at most 16,000 pixels).
   */
  async screenshot(file, { fullPage = false } = {}) {
    const size = fullPage ? await this.evaluate('({ width: document.documentElement.clientWidth, height: Math.min(16000, document.documentElement.scrollHeight) })') : undefined;
    const { data } = await this.send('Page.captureScreenshot', { format: 'png', ...(size ? { captureBeyondViewport: true, clip: { x: 0, y: 0, ...size, scale: 1 } } : {}) }, this.sessionId);
    fs.writeFileSync(file, Buffer.from(data, 'base64'));
  }
}
