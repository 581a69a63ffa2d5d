import fs from 'node:fs';
import { InputError } from './errors.js';

/**
 * Reads a text file named by the user (a run file, a query file), as UTF-8.
 * @param file the path as given
 * @param what what the file is, for the messages (e.g. "run file")
 * @returns the file's text
 * @throws InputError naming the file when it does not exist, is a directory or cannot be read
 */
export function readTextInput(file: string, what: string): string {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new InputError(`${what} not found`, { file });
  }
  if (stat.isDirectory()) throw new InputError(`${what} is a directory: give the file itself`, { file });
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`${what} cannot be read: ${(e as Error).message}`, { file });
  }
}
