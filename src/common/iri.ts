import fs from 'node:fs';
import readline from 'node:readline';
import * as oxigraph from 'oxigraph';

/**
 * Why a string is not an IRI that oxigraph (and so every shard endpoint) accepts, or undefined if
 * it is one: RFC 3987 syntax, valid percent-encoding, no spaces or `<>"{}|^\``.
 */
export function iriError(iri: string): string | undefined {
  try {
    oxigraph.namedNode(iri);
    return undefined;
  } catch (e) {
    return (e as Error).message ?? String(e);
  }
}

/**
 * The 1-based number of the first line of a text file that contains `needle`, or undefined.
 * Used to name the line of an error found after parsing (the parser does not report lines of
 * triples it accepted).
 */
export async function findLine(file: string, needle: string): Promise<number | undefined> {
  const rl = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
  let n = 0;
  try {
    for await (const line of rl) {
      n++;
      if (line.includes(needle)) return n;
    }
  } finally {
    rl.close();
  }
  return undefined;
}
