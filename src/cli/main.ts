/**
 * The `fkgqa` entry point (bin/fkgqa.js): parses the command line (program.ts), runs the command
 * (its action in commands/<verb>.ts, loaded then), and turns errors into exit codes: 2 bad input
 * (InputError, commander's usage errors), 3 internal error; on SIGINT/SIGTERM it removes staged
 * output before exiting and says what was removed and what was written completely and kept
 * (`interruptionMessage`); when stdout's reader closes the pipe, it exits with 141 without a trace.
 */
import { CommanderError } from 'commander';
import { InputError } from '../common/errors.js';
import { discardAllStaged, hasStaged, interruptionMessage } from '../common/output.js';
import { program } from './program.js';

export { program, DEMO_SOURCE } from './program.js';

/**
 * The exit code of an error thrown by a command or by commander, after writing its message to
 * stderr as `fkgqa` does: commander's errors (it has printed its own message) are 2, but --help,
 * `fkgqa help` and --version which are 0, and no command at all, which is 2 (a usage error: the help on
 * stderr); an InputError is 2 (`fkgqa: error: <message>`); anything else is an
 * internal error, 3 (`fkgqa: internal error: <message>`, the stack with FKGQA_DEBUG set).
 */
function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError) {
    // Commander has printed its message; usage errors are bad input (2), --help and --version are not errors.
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return 0;
    // `fkgqa help` prints the help on stdout (0); `fkgqa` with no command prints it on stderr: a usage error (2).
    if (e.code === 'commander.help') return e.exitCode === 0 ? 0 : 2;
    return 2;
  }
  if (e instanceof InputError) {
    process.stderr.write(`fkgqa: error: ${e.message}\n`);
    return 2;
  }
  process.stderr.write(`fkgqa: internal error: ${process.env.FKGQA_DEBUG ? (e as Error).stack : (e as Error).message}\n`);
  return 3; // not 1, which means "a real difference found"
}

/**
 * Runs one command line (`argv` as process.argv: node, script, then the arguments) without the
 * signal handlers of `main`: the command's output goes to process.stdout/stderr, and its exit code
 * to process.exitCode (a command sets 1 or 2 itself; an error thrown sets the code of `exitCodeOf`).
 * `main` is this plus the handlers; tests run it in their own process (tests/helpers.ts).
 */
export async function runCli(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (e) {
    process.exitCode = exitCodeOf(e);
  }
}

/** Runs the CLI; bad input exits with code 2 and a message naming the file, line or option; a bug exits with 3. */
export async function main(argv: string[]): Promise<void> {
  // Interrupted: remove staging directories (nothing half-written stays), then exit as signalled.
  let interrupted = false;
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      if (interrupted) return; // a repeated signal while cleaning up
      // A command with its own handler (fkgqa serve closes its endpoints) and nothing staged: leave it to that.
      if (!hasStaged() && process.listenerCount(signal) > 1) return;
      interrupted = true;
      process.stderr.write(`fkgqa: interrupted (${signal}); ${interruptionMessage()}\n`);
      process.exit(code);
    });
  }
  // The reader of stdout went away (`fkgqa … | head`): stop quietly, as a Unix tool killed by
  // SIGPIPE does (exit 141), after removing staged output, instead of an unhandled EPIPE.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    discardAllStaged();
    process.exit(141);
  });
  await runCli(argv);
}
