import fs from 'node:fs';

/** Progress lines on stderr (never stdout, which carries results), or none with --quiet. */
export const stderrProgress = (quiet: boolean | undefined) => (quiet ? undefined : (line: string) => process.stderr.write(`${line}\n`));

/**
 * The line that says which report files a command wrote, each with its size: `fkgqa stats: wrote
 * report.html (41 KiB; open it in a browser), per-query.csv (3 KiB)`. An HTML page says it opens in a
 * browser.
 * @param command the command's name (`stats`, `score`)
 * @param files the paths written, in the order said (they must exist)
 */
export function wroteLine(command: string, files: readonly string[]): string {
  const said = files.map((f) => `${f} (${Math.max(1, Math.round(fs.statSync(f).size / 1024))} KiB${/\.html?$/i.test(f) ? '; open it in a browser' : ''})`);
  return `fkgqa ${command}: wrote ${said.join(', ')}`;
}
