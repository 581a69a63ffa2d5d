import { describe, expect, it } from 'vitest';
import { program } from '../src/cli/program.js';

// The defaults that live in the library must not be hidden by a commander default: with
// --max-query-chars defaulting to 8000 on the command line, `fkgqa eval --agent oracle` would refuse a
// 14,579-character oracle query as too long and score it wrong, although eval's own default for a
// scripted agent is 1,000,000.
describe('fkgqa eval and run: --max-query-chars has no command-line default', () => {
  it('leaves the choice to the library (SCRIPTED_MAX_QUERY_CHARS for a scripted agent, 8000 for a model)', () => {
    for (const name of ['eval', 'run']) {
      const cmd = program().commands.find((c) => c.name() === name)!;
      const opt = cmd.options.find((o) => o.long === '--max-query-chars')!;
      expect(opt.defaultValue, name).toBeUndefined();
      expect(opt.description, name).toContain('default: 1000000 for a scripted agent');
    }
  });
});
