/**
 * Names in a build: what a graph may be called (a graph is a folder of the build).
 */
import { InputError } from '../common/errors.js';

/** Names a build writes at its top level: a graph may not be called so. */
const RESERVED = new Set(['benchmark.json', 'build.json', 'catalogue.json', 'catalogue.ttl', 'endpoints.json']);

/**
 * Checks that a graph name can be a folder of the build: one path segment, not `.` or `..`, not
 * hidden, no separators or control characters, not a name the build uses itself.
 * @throws InputError naming the file the name comes from
 */
export function checkGraphName(name: string, file: string): void {
  const bad = name === '' || name.startsWith('.') || /[/\\\u0000-\u001f\u007f]/.test(name) || RESERVED.has(name.toLowerCase()) || name.length > 200;
  if (bad) throw new InputError(`"${name}" cannot be a graph name (it must be one path segment, not hidden, not one of ${[...RESERVED].join(', ')})`, { file });
}

/**
 * The error for a `--kg` that names no graph: what was asked for, where it was looked for, and
 * every graph there is, so that the user can pick one (the same words on every command that takes
 * `--kg`).
 * @param kg the name given
 * @param graphs the graphs there are (listed sorted)
 * @param where where they were looked for, e.g. "this build", "the source (questions and kg/)"
 * @param file the file or folder named in the error
 */
export function unknownGraphError(kg: string, graphs: Iterable<string>, where: string, file?: string): InputError {
  const names = [...new Set(graphs)].sort();
  return new InputError(`--kg ${kg}: no such graph in ${where} (graphs: ${names.join(', ') || 'none'})`, file ? { file } : {});
}
