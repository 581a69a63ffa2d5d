/**
 * The layout check of the HTML reports in headless Chromium: every text a chart draws, on a canvas
 * (Chart.js: tick labels, axis titles, legend) or in SVG, with its box on the page, so that a test
 * can assert that no two texts of a chart overlap and none is cut by the chart's edge, and that the
 * page keeps a margin and needs no horizontal scrolling.
 *
 * Canvas text leaves no element to measure, so `CANVAS_TEXT_HOOK` (run in the page before its own
 * scripts) wraps `fillText`: each call records the ink box of the text (`measureText`'s actual
 * bounding box, which follows the text's alignment and baseline) through the context's transform,
 * in the canvas's pixels; a full `clearRect` (Chart.js clears before each draw) forgets that canvas's
 * boxes, so what is recorded is what the canvas shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { launchChromium } from '../scripts/chromium.js';

/** Installed before the page's scripts: records the box of every text drawn on a canvas. */
export const CANVAS_TEXT_HOOK = `(() => {
  const drawn = (window.__canvasText = new Map());
  const P = CanvasRenderingContext2D.prototype;
  const fillText = P.fillText;
  const clearRect = P.clearRect;
  P.fillText = function (text, x, y, maxWidth) {
    const s = String(text);
    if (s.trim()) {
      const m = this.measureText(s);
      const t = this.getTransform();
      const xs = [x - m.actualBoundingBoxLeft, x + m.actualBoundingBoxRight];
      const ys = [y - m.actualBoundingBoxAscent, y + m.actualBoundingBoxDescent];
      const pts = xs.flatMap((px) => ys.map((py) => [t.a * px + t.c * py + t.e, t.b * px + t.d * py + t.f]));
      const list = drawn.get(this.canvas) ?? [];
      list.push({ text: s, left: Math.min(...pts.map((p) => p[0])), right: Math.max(...pts.map((p) => p[0])), top: Math.min(...pts.map((p) => p[1])), bottom: Math.max(...pts.map((p) => p[1])) });
      drawn.set(this.canvas, list);
    }
    return fillText.apply(this, arguments);
  };
  P.clearRect = function (x, y, w, h) {
    const t = this.getTransform();
    if (x + t.e <= 0 && y + t.f <= 0 && w * t.a >= this.canvas.width && h * t.d >= this.canvas.height) drawn.delete(this.canvas);
    return clearRect.apply(this, arguments);
  };
})();`;

/** A text of a chart and its box, in CSS pixels relative to the chart's top left corner. */
export interface TextBox {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

/** What `checkTextLayout` found on a page. */
export interface TextLayout {
  /** Per chart (canvas or svg.chart, by id): how many texts it has. */
  texts: Record<string, number>;
  /** Pairs of texts of one chart whose boxes overlap (by more than half a pixel each way). */
  overlaps: { chart: string; a: string; b: string }[];
  /** Texts that reach past their chart's edge (by more than half a pixel). */
  cut: { chart: string; text: string }[];
  /** How much wider than the viewport the page is (0: no horizontal scrolling). */
  overflowX: number;
  /** Distance of the page's text (as far as it shows: a wide table scrolls in its box) from the viewport's left and right edges, in CSS pixels (the smaller one). */
  margin: number;
}

/** In the page: every chart's text boxes, then the overlaps, the cuts, the overflow and the margin. */
const LAYOUT = `(() => {
  const charts = [];
  for (const c of document.querySelectorAll('canvas')) {
    const k = c.getBoundingClientRect().width / c.width;
    const boxes = (window.__canvasText?.get(c) ?? []).map((b) => ({ text: b.text, left: b.left * k, right: b.right * k, top: b.top * k, bottom: b.bottom * k }));
    charts.push({ id: c.id || 'canvas', width: c.getBoundingClientRect().width, height: c.getBoundingClientRect().height, boxes });
  }
  for (const svg of document.querySelectorAll('svg.chart')) {
    const r = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')].filter((t) => t.textContent.trim()).map((t) => {
      const q = t.getBoundingClientRect();
      return { text: t.textContent, left: q.left - r.left, right: q.right - r.left, top: q.top - r.top, bottom: q.bottom - r.top };
    });
    charts.push({ id: svg.id || 'svg', width: r.width, height: r.height, boxes });
  }
  const texts = {}, overlaps = [], cut = [];
  for (const ch of charts) {
    texts[ch.id] = ch.boxes.length;
    for (const b of ch.boxes) if (b.left < -0.5 || b.top < -0.5 || b.right > ch.width + 0.5 || b.bottom > ch.height + 0.5) cut.push({ chart: ch.id, text: b.text });
    for (let i = 0; i < ch.boxes.length; i++)
      for (let j = i + 1; j < ch.boxes.length; j++) {
        const a = ch.boxes[i], b = ch.boxes[j];
        if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5) overlaps.push({ chart: ch.id, a: a.text, b: b.text });
      }
  }
  const range = document.createRange();
  let left = Infinity, right = -Infinity;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest('script,style,svg')) continue;
    range.selectNodeContents(n);
    // A text in a scrolling box (a wide table) shows only within that box.
    let clip = { left: -Infinity, right: Infinity };
    for (let e = n.parentElement; e && e !== document.body; e = e.parentElement) {
      if (getComputedStyle(e).overflowX !== 'visible') { const b = e.getBoundingClientRect(); clip = { left: Math.max(clip.left, b.left), right: Math.min(clip.right, b.right) }; }
    }
    for (const r of range.getClientRects()) if (r.width > 0) { left = Math.min(left, Math.max(r.left, clip.left)); right = Math.max(right, Math.min(r.right, clip.right)); }
  }
  const overflowX = Math.max(0, document.documentElement.scrollWidth - document.documentElement.clientWidth);
  return { texts, overlaps, cut, overflowX, margin: Math.round(Math.min(left, document.documentElement.clientWidth - right)) };
})()`;

/**
 * Opens an HTML file in headless Chromium at each width, waits until `ready` (a script expression)
 * holds, and reads the layout of its texts (see the module comment). With `screenshots`, writes a
 * full-page PNG per width there (`<name>-<width>.png`).
 * @param evaluate further script expressions to read in the page, by name (their values are returned per width)
 */
export async function checkTextLayout(
  file: string,
  o: { widths: number[]; ready: string; screenshots?: string; evaluate?: Record<string, string> },
): Promise<Record<number, TextLayout & { values: Record<string, unknown> }>> {
  const out: Record<number, TextLayout & { values: Record<string, unknown> }> = {};
  const browser = await launchChromium();
  try {
    for (const width of o.widths) {
      const page = await browser.open(`file://${file}`, { width, height: 1000, beforeLoad: CANVAS_TEXT_HOOK });
      await page.waitFor(o.ready);
      const layout = (await page.evaluate(LAYOUT)) as TextLayout;
      const values: Record<string, unknown> = {};
      for (const [k, expr] of Object.entries(o.evaluate ?? {})) values[k] = await page.evaluate(expr);
      if (o.screenshots) {
        fs.mkdirSync(o.screenshots, { recursive: true });
        await page.screenshot(path.join(o.screenshots, `${path.basename(file, '.html')}-${width}.png`), { fullPage: true });
      }
      out[width] = { ...layout, values };
    }
  } finally {
    await browser.close();
  }
  return out;
}
