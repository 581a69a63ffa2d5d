/** Progress lines on stderr (never stdout, which carries results), or none with --quiet. */
export const stderrProgress = (quiet: boolean | undefined) => (quiet ? undefined : (line: string) => process.stderr.write(`${line}\n`));
