/**
 * Every shape of SPARQL around SERVICE (tests/service-shapes.ts) on every federation engine
 * (comunica, and jena where it runs), against the shard endpoints of car_1 of the real corpus
 * served by one `serve`: each answer equals the answer of the same query on the unsharded graph
 * (oxigraph), in order where the query orders every row; the shapes no engine answers as the
 * unsharded graph does are refused by every engine and by routing in the same words, before any
 * request. Skipped without the real corpus (../shared/spider4sparql, or FKGQA_SPIDER).
 * The shapes marked slow (hundreds of requests each) are in tests/service-shapes.slow.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryFromUrls } from '../src/federation/registry.js';
import { planQuery } from '../src/federation/routing.js';
import { HAS_SPIDER } from './helpers.js';
import { expectSameAsUnsharded, JSON_RESULTS, REFUSED, SHAPE_ENGINES, type ShapeBench, shapeBench, SHAPES } from './service-shapes.js';

describe.runIf(HAS_SPIDER)('SERVICE shapes: every engine answers as the unsharded graph (car_1 of the real corpus)', () => {
  let bench: ShapeBench;
  beforeAll(async () => {
    bench = await shapeBench(SHAPE_ENGINES);
  });
  afterAll(async () => bench?.close());

  it("runs on comunica, and on jena where Java and Debian's Jena are installed", () => {
    expect(Object.keys(bench.engines)).toEqual(SHAPE_ENGINES);
  });

  for (const shape of SHAPES.filter((s) => !s.slow)) {
    it(shape.name, async () => expectSameAsUnsharded(bench, shape));
  }

  it('the shapes no engine answers as the unsharded graph are refused by every engine, before any request, and by routing, in the same words', async () => {
    const registry = registryFromUrls([1, 2, 3, 4, 5, 6, 7].map((n) => bench.server.endpoint(`car_1-shard${n}`)!.url));
    for (const shape of REFUSED) {
      const text = shape.query(bench.spelling);
      const plan = planQuery(text, registry, { maxQueryChars: 8000 });
      expect(plan.ok, shape.name).toBe(false);
      const message = plan.ok ? '' : plan.message;
      expect(message.startsWith(shape.error), `${shape.name}: ${message}`).toBe(true);
      expect(message, shape.name).toContain('nothing was sent');
      expect(plan.ok ? '' : plan.errorClass).toBe(shape.name === 'SERVICE inside SERVICE' ? 'nested-service' : 'unsupported-shape');
      for (const [name, engine] of Object.entries(bench.engines)) {
        // The agent's text (prefixes declared) and routing's regenerated text (full IRIs) alike.
        expect(await engine.query(text, JSON_RESULTS, { deadline: { ms: 120_000, from: 'call' } }), `${name}: ${shape.name}`).toEqual({
          status: 'error',
          error: message,
          httpStatus: 400,
          requests: {},
        });
      }
    }
  });
});
