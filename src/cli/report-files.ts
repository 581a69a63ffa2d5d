import fs from 'node:fs';
import { stateDir } from '../build/state.js';

/**
 * The folders `fkgqa stats` and `fkgqa score` read, where no report file may go: the build
 * (`--shards`), the state folder they really read (`--state`, or `<shards>.state` beside the build
 * when not given), and the state folder beside the build a symbolic link `--shards` points to
 * (`<real build>.state`, where that build's stored gold answers are). `checkReportOutputs`
 * resolves the links of each.
 * @param o the command's options (`shards`, `state`)
 */
export function readFolders(o: { shards?: string; state?: string }): string[] {
  if (!o.shards) return o.state ? [o.state] : [];
  const folders = [o.shards, stateDir(o.shards, o.state)];
  try {
    folders.push(stateDir(fs.realpathSync(o.shards)));
  } catch {
    // no build there: the command refuses it after the checks
  }
  return folders;
}
