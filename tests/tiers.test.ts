/**
 * The split of tests between `npm test` and `npm run test:slow` (tests/tiers.ts): a test tagged slow
 * runs in test:slow only if its file is in SPLIT_FILES and carries the `split-tiers` module tag;
 * otherwise it would run in neither tier.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';
import { SPLIT_FILES } from './tiers.js';

describe('test tiers', () => {
  const files = fs
    .readdirSync(path.join(ROOT, 'tests'))
    .filter((f) => f.endsWith('.test.ts') && !f.endsWith('.slow.test.ts'))
    .map((f) => `tests/${f}`);
  const text = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8');

  it('every file of npm test with a test tagged slow is in SPLIT_FILES and carries the split-tiers module tag, and no other', () => {
    const tagged = files.filter((f) => /\{ tags: \['slow'\]/.test(text(f))).sort();
    const marked = files.filter((f) => /^\/\/ @module-tag split-tiers\b/m.test(text(f))).sort();
    expect(tagged.length).toBeGreaterThan(0);
    expect(marked).toEqual(tagged);
    expect([...SPLIT_FILES].sort()).toEqual(tagged);
  });
});
