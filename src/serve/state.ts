/**
 * The runtime state of a running `fkgqa serve`, kept in the build's state folder
 * (src/common/state.ts: default `<build>.state/`, option `--state <dir>`), never in the build:
 * - `serve.lock`: taken when serve starts (`{pid, procStart, started}`, created exclusively), so a
 *   second serve with the same state folder refuses to start instead of overwriting the first's
 *   files; a lock whose process is gone, or whose pid now belongs to another process (its start
 *   time differs), is stale and taken over;
 * - `endpoints.json` (`EndpointsFile` plus `pid`, `procStart` and `started`), written once every
 *   endpoint listens;
 * both removed on a clean stop.
 */
import { pidAlive, processStartTime, writeFileAtomic } from '../common/output.js';
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { STATE_FILES, stateDir } from '../build/state.js';

/** Name of the lock file of a running serve inside the state folder. */
export const SERVE_LOCK = 'serve.lock';

/** Who holds a state folder: the serve process. */
export interface ServeOwner {
  pid: number;
  /** Start time of the process in clock ticks since boot (`/proc/<pid>/stat` field 22), or null where unknown. */
  procStart: number | null;
  /** ISO 8601 time the serve started. */
  started: string;
}

/** The start time of a process in clock ticks since boot (Linux `/proc/<pid>/stat` field 22, see processStartTime), or null. */
export function processStart(pid: number): number | null {
  const v = Number(processStartTime(pid));
  return Number.isFinite(v) ? v : null;
}

/** True when the process that wrote `owner` is still running (same pid, same start time where known). */
export function ownerAlive(owner: ServeOwner): boolean {
  if (!pidAlive(owner.pid)) return false;
  if (owner.procStart === null) return true;
  const now = processStart(owner.pid);
  return now === null || now === owner.procStart;
}

/** The owner record of this process. */
export function thisOwner(): ServeOwner {
  return { pid: process.pid, procStart: processStart(process.pid), started: new Date().toISOString() };
}

function readOwner(file: string): ServeOwner | undefined {
  try {
    const o = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<ServeOwner>;
    if (typeof o.pid !== 'number') return undefined;
    return { pid: o.pid, procStart: typeof o.procStart === 'number' ? o.procStart : null, started: String(o.started ?? '?') };
  } catch {
    return undefined;
  }
}

/**
 * Takes the serve lock of a state folder (creating the folder).
 * @param dir the state folder
 * @returns the owner record written
 * @throws InputError (exit 2) when a running serve holds the lock, naming its pid and start time
 */
export function acquireServeLock(dir: string, build: string): ServeOwner {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, SERVE_LOCK);
  const me = thisOwner();
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me) + '\n', { flag: 'wx' });
      return me;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const other = readOwner(file);
    if (other && ownerAlive(other)) {
      throw new InputError(
        `fkgqa serve (pid ${other.pid}, started ${other.started}) is already serving ${path.resolve(build)} with this state folder: stop it, or give this serve its own --state <dir>`,
        { file: dir },
      );
    }
    // Stale (the process is gone or its pid was reused), or unreadable: take it over.
    fs.rmSync(file, { force: true });
  }
  throw new InputError('could not take the serve lock of the state folder (another serve is starting?)', { file: dir });
}

/** Removes the lock and `endpoints.json` of a state folder if this process holds them. */
export function releaseServeState(dir: string): void {
  for (const name of [STATE_FILES.endpoints, SERVE_LOCK]) {
    const file = path.join(dir, name);
    if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
  }
}

/**
 * Reads the `endpoints.json` of the serve running on a build, for clients such as `verify` and
 * `mcp` (generic over the file's shape, `EndpointsFile` in server.ts).
 * @param build the build folder
 * @param state the `--state` folder, when not the default `<build>.state/`
 * @throws InputError (exit 2) when no serve of this build is running with that state folder, or the
 *   file is stale (its process is gone)
 */
export function readServeEndpoints<T = unknown>(build: string, state?: string): T & ServeOwner {
  const file = path.join(stateDir(build, state), STATE_FILES.endpoints);
  if (!fs.existsSync(file)) {
    throw new InputError(`no fkgqa serve is running on ${path.resolve(build)} (start one with fkgqa serve --shards ${build}${state ? ` --state ${state}` : ''})`, { file });
  }
  let parsed: T & ServeOwner;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as T & ServeOwner;
  } catch (e) {
    throw new InputError(`not JSON: ${(e as Error).message}`, { file });
  }
  if (typeof parsed.pid !== 'number' || !ownerAlive({ pid: parsed.pid, procStart: parsed.procStart ?? null, started: parsed.started })) {
    throw new InputError(`stale: the fkgqa serve that wrote it (pid ${parsed.pid}) is no longer running`, { file });
  }
  return parsed;
}
