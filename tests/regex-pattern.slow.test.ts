import { describe, expect, it } from 'vitest';
import { patternProblem } from '../src/sparql/regex.js';
import { ENGINE_TESTS_RUN, server, useHostileEndpoints, withMcp, type ToolAnswer } from './hostile-fixture.js';

/**
 * An invalid constant regular expression (REGEX, REPLACE) is the agent's error, refused before
 * anything is sent, on every route: the lone SERVICE sent to a shard (oxigraph read it as an
 * expression error: 0 rows) and the federated route on both engines (which failed the query).
 */

useHostileEndpoints();

describe('regex pattern / an invalid constant pattern is refused, naming it, on every route', () => {
  it('patternProblem: unbalanced brackets and a quantifier with nothing to repeat are invalid; flag q takes any pattern, flag x drops whitespace', () => {
    expect([patternProblem('('), patternProblem('[a'), patternProblem('*a'), patternProblem('a)')]).toEqual(['Unterminated group', 'Unterminated character class', 'Nothing to repeat', "Unmatched ')'"]);
    expect([patternProblem('^a(b|c)*$'), patternProblem('\\p{L}'), patternProblem('(', 'q'), patternProblem('( a )', 'x')]).toEqual([undefined, undefined, undefined, undefined]);
  });

  for (const engine of ['comunica', 'jena'] as const) {
    it.skipIf(!ENGINE_TESTS_RUN[engine])(`${engine}: REGEX(?t, "(") in a lone SERVICE and across two, REPLACE with "[" in a BIND: the agent's error (syntax, not infrastructure); a valid pattern runs`, async () => {
      const shard1 = server.endpoint('library-shard1')!.url;
      const lone = (f: string) => `SELECT * { SERVICE <${shard1}> { ?b ?p ?t ${f} } }`;
      const two = (f: string) => `SELECT * { SERVICE <${shard1}> { ?b ?p ?t } SERVICE <${shard1}> { ?b ?q ?u } ${f} }`;
      const verdict = (r: ToolAnswer) => {
        const m = r._meta?.['fkgqa/error'] as { class: string; infrastructure: boolean } | undefined;
        return { isError: r.isError ?? false, class: m?.class, infrastructure: m?.infrastructure, text: r.content[0].text.replace(/\n[\s\S]*/, '') };
      };
      const refused = (fn: string, pattern: string, why: string) => ({ isError: true, class: 'syntax', infrastructure: false, text: expect.stringContaining(`the pattern "${pattern}" of ${fn} is not a regular expression (${why}); nothing was sent`) });
      await withMcp([shard1], engine, async (call) => {
        const got = {
          lone: verdict(await call(lone(`FILTER(REGEX(?t, '('))`))),
          two: verdict(await call(two(`FILTER(REGEX(?t, '('))`))),
          replace: verdict(await call(two(`BIND(REPLACE(STR(?t), "[", "") AS ?r)`))),
          valid: verdict(await call(lone(`FILTER(REGEX(STR(?t), '^http', 'i'))`))),
        };
        expect(got).toEqual({
          lone: refused('REGEX', '(', 'Unterminated group'),
          two: refused('REGEX', '(', 'Unterminated group'),
          replace: refused('REPLACE', '[', 'Unterminated character class'),
          valid: { isError: false, class: undefined, infrastructure: undefined, text: expect.stringMatching(/^[1-9]\d* rows \(direct/) },
        });
      });
    }, 300_000);
  }
});
