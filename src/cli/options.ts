/**
 * Option conventions shared by every command (docs/cli.md):
 * - machine-readable output is chosen with `--format <format>`; `--json` is a shorthand for
 *   `--format json` on every command that has a JSON form;
 * - the same thing has the same option name on every command (`--void-engine` on partition and
 *   describe; describe still accepts the old `--engine`, hidden, as a deprecated alias).
 */
import { Option } from 'commander';
import { InputError } from '../common/errors.js';

/** `--format <format>` with these choices (`json` among them); read it with `outputFormat`. */
export const formatOption = (choices: string[], help = 'output format (default: text)') => new Option('--format <format>', help).choices(choices);

/** `--json`, the shorthand for `--format json`. */
export const jsonOption = () => new Option('--json', 'shorthand for --format json');

/**
 * The output format chosen on a command with `addFormatOptions` (`fallback` when neither option is given).
 * @throws InputError when `--json` is given with another `--format`
 */
export function outputFormat(o: { format?: string; json?: boolean }, fallback = 'text'): string {
  if (o.json && o.format !== undefined && o.format !== 'json') throw new InputError(`--json is --format json: it cannot be combined with --format ${o.format}`);
  return o.json ? 'json' : (o.format ?? fallback);
}

/** `--void-engine <engine>`: auto, sparql or stream; read it with `voidEngine`. */
export const voidEngineOption = (help: string) => new Option('--void-engine <engine>', `${help} (default: auto)`).choices(['auto', 'sparql', 'stream']);

/** The old name of `--void-engine` on describe, hidden from the help. */
export const engineAliasOption = () => new Option('--engine <engine>', 'deprecated: use --void-engine').choices(['auto', 'sparql', 'stream']).hideHelp();

/** The VoID engine chosen with `--void-engine` or its alias `--engine` (`auto` if none). */
export function voidEngine(o: { voidEngine?: string; engine?: string }): 'auto' | 'sparql' | 'stream' {
  if (o.voidEngine && o.engine && o.voidEngine !== o.engine) throw new InputError(`--engine is the old name of --void-engine: give one of them (got --void-engine ${o.voidEngine} and --engine ${o.engine})`);
  return (o.voidEngine ?? o.engine ?? 'auto') as 'auto' | 'sparql' | 'stream';
}
