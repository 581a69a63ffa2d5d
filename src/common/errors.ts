/**
 * Errors fkgqa raises for bad input. Every message names the file (and line, query or option)
 * and what is wrong, so the CLI can print it as is and exit non-zero.
 */

/** Where in the input an error was found. All fields are optional; `file` is a path as given. */
interface InputLocation {
  file?: string;
  line?: number;
  /** Identifier of a gold query, e.g. `concert_singer#q3`. */
  query?: string;
}

/**
 * Bad input: a file that does not parse, a question naming a missing graph, an option out of range.
 * The CLI prints `message` and exits with code 2.
 */
export class InputError extends Error {
  readonly location: InputLocation;
  constructor(message: string, location: InputLocation = {}) {
    const where = [location.file, location.line !== undefined ? `line ${location.line}` : undefined, location.query].filter((x) => x !== undefined).join(', ');
    super(where ? `${where}: ${message}` : message);
    this.name = 'InputError';
    this.location = location;
  }
}

/** Extracts the line number from a parser message such as n3's "Unexpected "x" on line 2." */
export function lineFromParserMessage(message: string): number | undefined {
  const m = /\bline (\d+)/i.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * A port that cannot be bound (Node's `listen` error), as an input error naming the port or host
 * (exit 2): in use, not allowed for this user, or a host that is no address of this machine; any
 * other error is returned as it is.
 * @param e the error of `server.listen`
 * @param host the interface asked for (`--host`)
 * @param port the port asked for (`--port`)
 */
export function listenError(e: NodeJS.ErrnoException, host: string, port: number): Error {
  const where = `port ${port} on ${host}`;
  if (e.code === 'EADDRINUSE') return new InputError(`${where} is in use (another fkgqa serve, or another server): choose another port with --port <n>, or --port 0 for any free port`);
  if (e.code === 'EACCES') return new InputError(`${where} may not be bound by this user (ports below 1024 need privileges): choose another port with --port <n>`);
  if (e.code === 'EADDRNOTAVAIL' || e.code === 'ENOTFOUND') return new InputError(`--host ${host} is not an address of this machine`);
  return e;
}
