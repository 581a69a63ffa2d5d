/**
 * The longer runs around SERVICE shapes and Comunica's corrections (`npm run test:slow`): the
 * shapes of tests/service-shapes.ts marked slow (seconds each: an EXISTS or OPTIONAL per
 * solution sends a request each) on every engine, and the README tour's `fkgqa verify` over concert_singer and pets_1 of
 * the real corpus, which Comunica 4.5.0's source selection made exit 1 (pets_1/q9 and q21, a
 * FILTER NOT EXISTS across shards) until its corrections (src/federation/comunica/corrections.ts).
 * Skipped without the real corpus.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fkgqaSync, HAS_SPIDER, ROOT, serveProcess, SPIDER, tmpDir } from './helpers.js';
import { expectSameAsUnsharded, SHAPE_ENGINES, type ShapeBench, shapeBench, SHAPES } from './service-shapes.js';

describe.runIf(HAS_SPIDER)('SERVICE shapes (slow): every engine answers as the unsharded graph (car_1 of the real corpus)', () => {
  let bench: ShapeBench;
  beforeAll(async () => {
    bench = await shapeBench(SHAPE_ENGINES);
  });
  afterAll(async () => bench?.close());

  for (const shape of SHAPES.filter((s) => s.slow)) {
    it(shape.name, async () => expectSameAsUnsharded(bench, shape));
  }
});

describe.runIf(HAS_SPIDER)("the README tour's verify over concert_singer and pets_1", () => {
  it('partition, stats, serve, then fkgqa verify --kg concert_singer pets_1 exits 0: the federated form of pets_1/q9 and q21 equals gold', { timeout: 900_000 }, async () => {
    const dir = tmpDir('fkgqa-tour-');
    const shards = path.join(dir, 'shards');
    const partition = fkgqaSync(['partition', '--source', SPIDER, '--out', shards, '--kg', 'concert_singer', 'pets_1', '-q']);
    expect(partition.code, partition.stderr).toBe(0);
    const stats = fkgqaSync(['stats', '--shards', shards, '-q']);
    expect(stats.code, stats.stderr).toBe(0);
    const served = await serveProcess(['--shards', shards, '--port', '0']);
    try {
      // As the tour runs it (the running serve's endpoints, verify's default forms, engine and time limit).
      const v = spawnSync(process.execPath, [path.join(ROOT, 'bin/fkgqa.js'), 'verify', '--shards', shards, '--kg', 'concert_singer', 'pets_1', '-q'], { encoding: 'utf8', cwd: dir });
      expect(v.status, `${v.stdout}\n${v.stderr}`).toBe(0);
      expect(v.stdout).toMatch(/no answer differs from gold beyond ties\n$/);
      // The per-query lines: gold, then federated, trivial, oracle (Comunica answered 34 rows and 19.56 here, gold 33 and 19.625).
      expect(v.stdout).toMatch(/^pets_1\/q9 +33 rows +identical 33 /m);
      expect(v.stdout).toMatch(/^pets_1\/q21 +1 row +identical 1 /m);
      expect(v.stdout).toMatch(/^ {2}comunica +federated +45 +\d+ +\d+ +0 +/m);
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });
});
