/**
 * The runtime state of a running `fkgqa serve`, kept in the build's state folder
 * (src/build/state.ts: default `<build>.state/`, option `--state <dir>`), never in the build:
 * - `serve.lock`: taken when serve starts (a lock file of src/common/output.ts, `LockOwner`), so a
 *   second serve with the same state folder refuses to start instead of overwriting the first's
 *   files; a lock whose process is gone, or whose pid now belongs to another process (its start
 *   time differs), is stale and taken over;
 * - `endpoints.json` (`EndpointsFile` plus `pid`, `procStart` and `started`), written once every
 *   endpoint listens;
 * both removed on a clean stop.
 */
import fs from 'node:fs';
import { isThisProcess, makeFolderFor, otherHostAdvice, ownerName, readLockOwner, takeLock, writeFileAtomic, type LockOwner } from '../common/output.js';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { STATE_FILES, type EndpointEntry, type EndpointsFileContents } from '../build/state.js';
import type { EndpointProfile } from './profile.js';

/** One endpoint of this server, as listed in `endpoints.json` (EndpointEntry with serve's profile type). */
export interface EndpointInfo extends EndpointEntry {
  /** Its behaviour profile, or null (complete and reliable). */
  profile: EndpointProfile | null;
}

/** The contents of `endpoints.json` as this server writes it. */
export interface EndpointsFile extends EndpointsFileContents {
  endpoints: EndpointInfo[];
}

/**
 * Takes the serve lock of a state folder (creating the folder).
 * @param dir the state folder
 * @returns the owner record written
 * @throws InputError (exit 2) when a running serve holds the lock, naming its pid, its host when another, and start time; or when the lock path is a directory
 */
export function acquireServeLock(dir: string, build: string): LockOwner {
  makeFolderFor(dir, 'state folder', dir);
  return takeLock(
    path.join(dir, STATE_FILES.serveLock),
    (other) =>
      new InputError(
        `fkgqa serve (${ownerName(other)}, started ${other.started}) is already serving ${path.resolve(build)} with this state folder: stop it, or give this serve its own --state <dir>${otherHostAdvice(other, path.join(dir, STATE_FILES.serveLock))}`,
        {
          file: dir,
        },
      ),
    () => new InputError('could not take the serve lock of the state folder (another serve is starting?)', { file: dir }),
  );
}

/** Removes the lock and `endpoints.json` of a state folder if this process holds them. */
export function releaseServeState(dir: string): void {
  for (const name of [STATE_FILES.endpoints, STATE_FILES.serveLock]) {
    const file = path.join(dir, name);
    const owner = readLockOwner(file);
    if (owner && isThisProcess(owner)) fs.rmSync(file, { force: true });
  }
}

/**
 * Writes `endpoints.json` into the state folder (temp file and rename: a reader never sees half
 * of it), once every endpoint listens.
 * @returns the file's path
 */
export function writeEndpointsFile(dir: string, contents: EndpointsFileContents): string {
  const file = path.join(dir, STATE_FILES.endpoints);
  writeFileAtomic(file, JSON.stringify(contents, null, 2) + '\n');
  return file;
}
