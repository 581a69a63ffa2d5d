import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import { DataFactory, StreamParser } from 'n3';
import type * as RDF from '@rdfjs/types';
import * as oxigraph from 'oxigraph';
import { checkXmlEntities } from './xml-entities.js';
import { InputError, lineFromParserMessage } from '../common/errors.js';
import { SKOLEM_PREFIX } from '../common/vocab.js';
import { MEDIA_TYPE, type RdfFormat } from './formats.js';

/** A triple with blank nodes already replaced by skolem IRIs: subject and predicate are IRIs. */
export interface Triple {
  subject: RDF.NamedNode;
  predicate: RDF.NamedNode;
  object: RDF.NamedNode | RDF.Literal;
}

/** A data file of one knowledge graph. */
export interface TripleFile {
  /** Path of the file. */
  file: string;
  format: RdfFormat;
  /** Graph name, used in the skolem IRIs of its blank nodes. */
  graph: string;
}

/**
 * The skolem IRI that replaces a blank node of a graph:
 * `urn:fkgqa:bnode:<graph>:<label>` with `<graph>` percent-encoded.
 * In N-Triples the label is the blank-node label of the file (`_:abc` → `...:abc`), which is stable
 * as long as the file is. Anonymous blank nodes (Turtle `[]`) and all blank nodes of RDF/XML files
 * (whose parser names them randomly) are numbered in order of first appearance (`~1`, `~2`, …), a
 * form no N-Triples or Turtle label can take, so the scheme is deterministic for a given file.
 */
export function skolemIri(graph: string, label: string): string {
  return `${SKOLEM_PREFIX}${encodeURIComponent(graph)}:${label}`;
}

/**
 * Checks that a byte stream is UTF-8, chunk by chunk, and knows the line it has reached: N-Triples
 * and Turtle are UTF-8, and a parser would otherwise replace bad bytes with U+FFFD silently.
 */
class Utf8Check {
  /** Bytes of a multi-byte sequence cut by the end of the previous chunk. */
  private carry: Buffer = Buffer.alloc(0);
  private lines = 1;
  /** Checks the next chunk; returns the 1-based line of the first bad byte sequence, or undefined. */
  push(chunk: Buffer): number | undefined {
    const data = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    // Keep back an unfinished sequence at the end (at most 3 bytes after its lead byte).
    let cut = data.length;
    for (let i = data.length - 1; i >= Math.max(0, data.length - 4); i--) {
      const b = data[i];
      if (b < 0x80) break; // ASCII: nothing unfinished
      if (b >= 0xc0) {
        const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
        if (data.length - i < need) cut = i;
        break;
      }
    }
    const whole = data.subarray(0, cut);
    this.carry = Buffer.from(data.subarray(cut));
    if (!isUtf8(whole)) {
      // Find the line: a newline byte never occurs inside a multi-byte sequence.
      let start = 0;
      let line = this.lines;
      for (;;) {
        const nl = whole.indexOf(10, start);
        if (!isUtf8(whole.subarray(start, nl < 0 ? whole.length : nl)) || nl < 0) return line;
        start = nl + 1;
        line++;
      }
    }
    for (let i = whole.indexOf(10); i >= 0; i = whole.indexOf(10, i + 1)) this.lines++;
    return undefined;
  }
  /** Checks the end of the input (an unfinished sequence); returns the last line if bad. */
  end(): number | undefined {
    return this.carry.length ? this.lines : undefined;
  }
}

/** Progress callback: bytes of the file read so far. */
export type ByteProgress = (bytesRead: number) => void;

/** Options of `scanTriples` beyond the triple callback. */
interface ScanOptions {
  onProgress?: ByteProgress;
  /** Receives every chunk of the file's bytes as read (e.g. to hash the file in the same read). */
  onChunk?: (chunk: Buffer) => void;
}

/**
 * Streams the triples of a data file, blank nodes skolemised (see `skolemIri`), calling `onTriple`
 * for each triple in file order. Named graphs are not expected; a quad in a named graph is an error.
 * @throws InputError naming the file and line of the first syntax error, or the unreadable file
 */
export async function scanTriples(src: TripleFile, onTriple: (t: Triple) => void, options: ScanOptions = {}): Promise<void> {
  if (!fs.existsSync(src.file)) throw new InputError('data file not found', { file: src.file });
  if (src.format === 'rdf-xml') return scanWithOxigraph(src, onTriple, options);
  return scanWithN3(src, onTriple, options);
}

/** An n3 data factory that turns blank nodes into skolem IRIs as the parser creates them. */
function skolemFactory(graph: string): typeof DataFactory {
  let anonymous = 0;
  return {
    ...DataFactory,
    blankNode: (name?: string) => DataFactory.namedNode(skolemIri(graph, name ?? `~${++anonymous}`)),
  } as unknown as typeof DataFactory;
}

function scanWithN3(src: TripleFile, onTriple: (t: Triple) => void, { onProgress, onChunk }: ScanOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const input = fs.createReadStream(src.file, { highWaterMark: 1 << 20 });
    const parser = new StreamParser({
      format: src.format === 'n-triples' ? 'N-Triples' : 'Turtle',
      factory: skolemFactory(src.graph),
      // Keep the file's own labels (by default n3 prefixes them with a per-parser counter).
      blankNodePrefix: '',
    } as ConstructorParameters<typeof StreamParser>[0]);
    let failed = false;
    const fail = (e: Error) => {
      if (failed) return;
      failed = true;
      input.destroy();
      reject(e instanceof InputError ? e : new InputError(e.message, { file: src.file, line: lineFromParserMessage(e.message) }));
    };
    input.on('error', fail);
    const utf8 = new Utf8Check();
    input.on('data', (chunk) => {
      onChunk?.(chunk as Buffer);
      const bad = utf8.push(chunk as Buffer);
      if (bad !== undefined) fail(new InputError('invalid UTF-8 byte sequence', { file: src.file, line: bad }));
      onProgress?.(input.bytesRead);
    });
    input.on('end', () => {
      const bad = utf8.end();
      if (bad !== undefined) fail(new InputError('invalid UTF-8 at the end of the file', { file: src.file, line: bad }));
    });
    parser.on('error', fail);
    parser.on('data', (q: RDF.Quad) => {
      if (failed) return;
      if (q.graph.termType !== 'DefaultGraph') {
        fail(new InputError(`quad in named graph <${q.graph.value}>: only triples are supported`, { file: src.file }));
        return;
      }
      try {
        onTriple(q as unknown as Triple);
      } catch (e) {
        fail(e as Error);
      }
    });
    parser.on('end', () => {
      if (!failed) resolve();
    });
    input.pipe(parser);
  });
}

async function scanWithOxigraph(src: TripleFile, onTriple: (t: Triple) => void, { onProgress, onChunk }: ScanOptions): Promise<void> {
  const labels = new Map<string, string>();
  const term = (t: oxigraph.Term): RDF.Term => {
    switch (t.termType) {
      case 'NamedNode':
        return DataFactory.namedNode(t.value);
      case 'BlankNode': {
        let label = labels.get(t.value);
        if (label === undefined) {
          label = `~${labels.size + 1}`;
          labels.set(t.value, label);
        }
        return DataFactory.namedNode(skolemIri(src.graph, label));
      }
      case 'Literal': {
        const lit = t as oxigraph.Literal;
        return DataFactory.literal(lit.value, lit.language ? lit.language : DataFactory.namedNode(lit.datatype.value));
      }
      default:
        throw new InputError(`unsupported term ${t.termType}`, { file: src.file });
    }
  };
  // Entity declarations come first (DOCTYPE): check them before the parser expands any.
  const head = Buffer.alloc(1 << 20);
  const fd = fs.openSync(src.file, 'r');
  let headBytes: number;
  try {
    headBytes = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  checkXmlEntities(head.subarray(0, headBytes).toString('utf8'), src.file, headBytes < head.length);
  const input = fs.createReadStream(src.file, { highWaterMark: 1 << 20 });
  async function* chunks() {
    for await (const c of input) {
      onChunk?.(c as Buffer);
      onProgress?.(input.bytesRead);
      yield c as Buffer;
    }
  }
  try {
    for await (const q of oxigraph.parse(chunks(), { format: MEDIA_TYPE[src.format] })) {
      onTriple({
        subject: term(q.subject) as RDF.NamedNode,
        predicate: DataFactory.namedNode(q.predicate.value),
        object: term(q.object) as RDF.NamedNode | RDF.Literal,
      });
    }
  } catch (e) {
    if (e instanceof InputError) throw e;
    const message = (e as Error).message ?? String(e);
    throw new InputError(message, { file: src.file, line: lineFromParserMessage(message) });
  } finally {
    input.destroy();
  }
}
