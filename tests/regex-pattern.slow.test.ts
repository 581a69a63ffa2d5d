import { describe, expect, it } from 'vitest';
import { ENGINE_TESTS_RUN, server, useHostileEndpoints, withMcp, type ToolAnswer } from './hostile-fixture.js';

/**
 * A constant regular expression (REGEX, REPLACE) outside the subset every engine reads alike is the
 * agent's error, refused before anything is sent, on every route: the lone SERVICE sent to a shard
 * (oxigraph: Rust's regex) and the federated route on both engines (Comunica: JavaScript's RegExp
 * with `u`; Jena: java.util.regex), which answered such patterns differently or failed.
 * The unit tests of each construct are in regex-pattern.test.ts.
 */

useHostileEndpoints();

/** One representative of each refused class: the filter or bind, and the start of the refusal. */
const REFUSED: [string, string, string][] = [
  ['invalid', `FILTER(REGEX(?t, '('))`, 'the pattern "(" of REGEX is refused, nothing was sent: it is not a regular expression (Unterminated group)'],
  ['comunica only fails', `FILTER(REGEX(STR(?t), "\\\\-"))`, 'the pattern "\\\\-" of REGEX is refused, nothing was sent: \\- outside brackets is no escape on every engine'],
  ['posix class', `FILTER(REGEX(STR(?t), "[[:alpha:]]"))`, 'the pattern "[[:alpha:]]" of REGEX is refused, nothing was sent: the POSIX class [[:…:]] is no XPath'],
  ['differs per route', `FILTER(REGEX(STR(?t), "a{,3}"))`, 'the pattern "a{,3}" of REGEX is refused, nothing was sent: a { that is not a quantifier'],
  ['block', `FILTER(REGEX(STR(?t), "\\\\p{IsBasicLatin}"))`, 'the pattern "\\\\p{IsBasicLatin}" of REGEX is refused, nothing was sent: the Unicode block'],
  ['lookahead', `FILTER(REGEX(STR(?t), "(?!A)^."))`, 'the pattern "(?!A)^." of REGEX is refused, nothing was sent: the lookahead (?!'],
  ['back-reference', `FILTER(REGEX(STR(?t), "(t)\\\\1"))`, 'the pattern "(t)\\\\1" of REGEX is refused, nothing was sent: the back-reference \\1'],
  ['flag', `FILTER(REGEX(STR(?t), "a", "u"))`, 'the pattern "a" with the flags "u" of REGEX is refused, nothing was sent: the flag "u" is no XPath flag'],
  ['computed flags', `FILTER(REGEX(STR(?t), "a", CONCAT("i", STR(?p))))`, 'the flags of REGEX are not a constant string'],
  ['empty match', `BIND(REPLACE(STR(?t), "x?", "y") AS ?r)`, 'the pattern "x?" of REPLACE is refused, nothing was sent: it matches the empty string'],
  ['replacement $', `BIND(REPLACE(STR(?t), "(h)", "$") AS ?r)`, 'the replacement "$" of REPLACE is refused, nothing was sent: the replacement\'s "$" is no group reference'],
  ['replacement \\', `BIND(REPLACE(STR(?t), "h", "\\\\\\\\") AS ?r)`, 'the replacement "\\\\\\\\" of REPLACE is refused, nothing was sent: a \\ in the replacement'],
  ['missing group', `BIND(REPLACE(STR(?t), "(h)", "$2") AS ?r)`, 'the replacement "$2" of REPLACE is refused, nothing was sent: the replacement\'s $2 refers to group 2'],
];

describe('regex pattern / a constant pattern outside the portable subset is refused, naming it, on every route', () => {
  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(
      `${engine}: each refused class in a lone SERVICE and across two: the agent's error (syntax, not infrastructure); portable patterns run`,
      async () => {
        const shard1 = server.endpoint('library-shard1')!.url;
        const lone = (f: string) => `SELECT * { SERVICE <${shard1}> { ?b ?p ?t ${f} } }`;
        const two = (f: string) => `SELECT * { SERVICE <${shard1}> { ?b ?p ?t } SERVICE <${shard1}> { ?b ?q ?u } ${f} }`;
        const verdict = (r: ToolAnswer) => {
          const m = r._meta?.['fkgqa/error'] as { class: string; infrastructure: boolean } | undefined;
          return { isError: r.isError ?? false, class: m?.class, infrastructure: m?.infrastructure, text: r.content[0].text.replace(/\n[\s\S]*/, '') };
        };
        const refused = (start: string) => ({ isError: true, class: 'syntax', infrastructure: false, text: expect.stringContaining(start) });
        await withMcp([shard1], engine, async (call) => {
          const got: Record<string, unknown> = {};
          const want: Record<string, unknown> = {};
          for (const [name, f, start] of REFUSED) {
            got[`lone ${name}`] = verdict(await call(lone(f)));
            got[`two ${name}`] = verdict(await call(two(f)));
            want[`lone ${name}`] = refused(start);
            want[`two ${name}`] = refused(start);
          }
          const runs = { isError: false, class: undefined, infrastructure: undefined, text: expect.stringMatching(/^[1-9]\d* rows \(/) };
          got['lone valid'] = verdict(await call(lone(`FILTER(REGEX(STR(?t), '^http', 'i'))`)));
          got['two valid'] = verdict(await call(two(`FILTER(REGEX(STR(?t), "^[h][t]{2}p[:-]?", "si")) BIND(REPLACE(STR(?t), "(h)(t)", "$2$1") AS ?r)`) + ' LIMIT 5'));
          want['lone valid'] = { ...runs, text: expect.stringMatching(/^11 rows \(direct/) };
          want['two valid'] = { ...runs, text: expect.stringMatching(/^5 rows \(/) };
          expect(got).toEqual(want);
        });
      },
      600_000,
    );
  }
});
