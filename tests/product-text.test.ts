import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The product speaks of itself: its code, comments, tests, test titles and documents say what it
 * does and why, never who found a thing when. References to a project's history point at lists
 * that are not in the repository (issues, review rounds, a list of library pitfalls, branches,
 * scratch folders on one machine), so a reader cannot follow them; say what the thing is instead
 * (e.g. "sparqljs keeps the backslash of escaped local names", not the pitfall's number).
 * A plain file scan, no build needed.
 */

/** One kind of history reference: a name, the pattern that finds it, and what to write instead. */
export interface HistoryPattern {
  name: string;
  pattern: RegExp;
  instead: string;
}

/**
 * The history references kept out of the product. Not listed, because they have product uses:
 * "hostile endpoint" (the test endpoints that misbehave on purpose), "XML entity attacks" (what
 * src/load/xml-entities.ts guards against), `/tmp/…` (temporary folders and example paths), and
 * dates (a generated report says when it was measured).
 */
export const HISTORY_PATTERNS: readonly HistoryPattern[] = [
  { name: 'issue number', pattern: /\bissues? #?\d+/i, instead: 'what the issue asked for, as a property of the product' },
  { name: 'stop number', pattern: /\bstop[s-]? ?#?\d+\b/i, instead: 'what was found, as a reason' },
  { name: "an issue's item", pattern: /\bitems? #?\d+\b/i, instead: 'the requirement itself' },
  { name: 'newcomer', pattern: /\bnewcomers?\b/i, instead: 'what a user would misread, and why the text says it this way' },
  { name: 'review pass', pattern: /\b(?:hostile|attack) pass\b|\battackers?\b|\(attack\b/i, instead: 'the fault the code must survive' },
  { name: 'pitfall number', pattern: /\bpitfalls? B\d+/i, instead: 'the pitfall in words, e.g. "oxigraph has no SERVICE"' },
  { name: 'branch name', pattern: /\bbranch (?:main|serve|[a-z0-9]+-[\w-]+)\b|\bthis branch\b|\(branch [\w-]+\)/i, instead: 'the change itself' },
  { name: 'commit of main', pattern: /\bmain [0-9a-f]{7,40}\b/, instead: 'the build or output digest the figure is about' },
  { name: 'closing note', pattern: /\bclosing notes?\b/i, instead: 'the fact the note recorded' },
  { name: 'former behaviour', pattern: /\(was:|\b(?!(?:is|are|be|been|being|was|were|gets?|got)\b)[a-z]+ used to\b/i, instead: 'what the product does, and why (a passive "is used to" is fine)' },
  { name: 'scratch path', pattern: /(?<![\w.])\/work\/|(?<![\w.-])scratch\//, instead: 'a path in the repository, or a placeholder such as <dev build>' },
];

/** A history reference found in a text: the pattern's name, the 1-based line and the matched text. */
export interface HistoryReference {
  name: string;
  line: number;
  text: string;
}

/** Every history reference in `text`, in line order (one per pattern and line). */
export function historyReferences(text: string): HistoryReference[] {
  const found: HistoryReference[] = [];
  text.split('\n').forEach((l, i) => {
    for (const p of HISTORY_PATTERNS) {
      const m = p.pattern.exec(l);
      if (m) found.push({ name: p.name, line: i + 1, text: m[0] });
    }
  });
  return found;
}

const ROOT = path.resolve(import.meta.dirname, '..');
/** What is scanned: the product's text, in the repository. */
const SCANNED = ['README.md', 'CHANGELOG.md', 'docs', 'src', 'tests', 'bench', 'scripts', 'federation', 'asp', 'prompts'];
const TEXT = /\.(?:md|ts|js|mjs|cjs|java|lp|json|ttl|sh)$/;
/**
 * Not scanned: this file (its documentation names the patterns), and generated files: the bench
 * record (docs/performance.json: absolute paths of the machine it ran on) and the compiled Comunica
 * engine (federation/comunica/compile.js writes it from node_modules).
 */
const SKIPPED = new Set(['tests/product-text.test.ts', 'docs/performance.json', 'federation/comunica/engine-service.cjs']);

/** The repository-relative paths of the text files under `entry` (a file or a folder). */
function textFiles(entry: string): string[] {
  const full = path.join(ROOT, entry);
  if (!fs.existsSync(full)) return [];
  if (fs.statSync(full).isFile()) return [entry];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((d) => {
    const rel = `${entry}/${d.name}`;
    if (d.isDirectory()) return d.name === 'node_modules' ? [] : textFiles(rel);
    return TEXT.test(d.name) ? [rel] : [];
  });
}

describe("product text: no references to the project's history", () => {
  it('finds none in README.md, CHANGELOG.md, docs/, src/, tests/, bench/, scripts/, federation/, asp/ and prompts/', () => {
    const files = SCANNED.flatMap(textFiles).filter((f) => !SKIPPED.has(f));
    // The scan reads the tree: the README, a source file, a test and a document are among its files.
    expect(files).toEqual(expect.arrayContaining(['README.md', 'src/index.ts', 'tests/architecture.test.ts', 'docs/cli.md', 'federation/jena/JenaFederationEngine.java', 'asp/cover.lp']));
    const found = files.flatMap((f) => historyReferences(fs.readFileSync(path.join(ROOT, f), 'utf8')).map((r) => `${f}:${r.line}: ${r.name}: ${r.text}`));
    expect(found).toEqual([]);
  });

  it('finds a planted reference of every kind, and none in the product uses the list leaves alone', () => {
    const planted: [string, string][] = [
      ['issue number', 'the port is fixed (issue 19)'],
      ['stop number', "the wait is counted to the deadline (stop 27's CI failure)"],
      ['stop number', 'it does not have the stop-27 additions'],
      ["an issue's item", 'runs are crash-safe (item 5)'],
      ['newcomer', 'a newcomer read 48/90 as queries'],
      ['review pass', 'scored silently (the hostile pass found it)'],
      ['review pass', 'waited=99 (attack, a timer fired early)'],
      ['pitfall number', 'oxigraph has no SERVICE (pitfall B11)'],
      ['branch name', 'Done (branch serve-point2).'],
      ['commit of main', 'alternating builds of main 89123f8 and of the check'],
      ['closing note', "see the closing note's left open"],
      ['scratch path', 'npm run bench:scripted -- --shards /work/scratch/dev/shards'],
      ['former behaviour', "it('exits 0 on SIGTERM (was: 143)')"],
      ['former behaviour', 'a limit this long is capped: it used to fire at once'],
      ['former behaviour', 'the requests that used to write files'],
    ];
    for (const [name, text] of planted) expect(historyReferences(`first line\n${text}\n`), text).toEqual([expect.objectContaining({ name, line: 2 })]);
    const product = [
      'A guard against XML entity attacks in RDF/XML input',
      'the hostile endpoint answers ASK {} correctly',
      'fkgqa serve --shards shards --state /tmp/second.state',
      'a query the pool stopped at its time limit of 30000 ms',
      'sparqljs keeps the backslash of escaped local names (RubenVerborgh/SPARQL.js#168)',
      'A set of 64-bit fingerprints, used to drop duplicate triples',
      'the text form of a triple pattern is used to deduplicate patterns',
      'const REPLACED: Record<number, { was: string }> = {};',
    ];
    expect(product.flatMap(historyReferences)).toEqual([]);
  });
});
