import fs from 'node:fs';
import path from 'node:path';
import { DataFactory, Writer } from 'n3';
import type * as RDF from '@rdfjs/types';
import { InputError } from '../common/errors.js';
import { getHasher } from '../common/hash.js';
import { StagedOutput } from '../common/output.js';
import { RDF_TYPE, XSD } from '../common/vocab.js';
import { readQuestions } from '../load/questions.js';
import { openSource } from '../load/source.js';
import { scanTriples, type Triple } from '../load/triples.js';
import { unknownGraphError } from '../build/names.js';
import { counted } from '../common/strings.js';

/** Options of `fkgqa synth`. */
export interface SynthOptions {
  /** Benchmark source directory holding the graph to replicate. */
  source: string;
  /** Graph to replicate. */
  kg: string;
  /** Triples of the synthetic graph (exactly; the last copy is cut short). */
  triples: number;
  /** Seed of the literal perturbation. */
  seed: number;
  /** Output source directory: `dev.json`, `kg/<kg>.nt`, `ontologies/<kg>.<ext>`. */
  out: string;
  progress?: (line: string) => void;
}

/** What `synthesize` wrote. */
export interface SynthResult {
  file: string;
  triples: number;
  copies: number;
  baseTriples: number;
  questions: number;
}

const NUMERIC = new Set([`${XSD}integer`, `${XSD}decimal`, `${XSD}double`, `${XSD}int`, `${XSD}long`]);

/**
 * Makes a Spider-like graph of a given size by replicating a graph with renamed instances, and
 * writes it as a benchmark source with the graph's questions and ontology, so that `fkgqa
 * partition` runs on it as on the original. Copy 0 is the original graph; in copy k ≥ 1 every
 * IRI that is a subject in the original gets the suffix `~k` (wherever it occurs), classes and
 * predicates stay, and numeric literals move by an offset in {-1, 0, 1} given by xxh64 of the
 * seed, the copy and the triple, so that copies are not identical. Deterministic for the same
 * input and options. Blank nodes are written as their skolem IRIs (see `skolemIri`).
 * @throws InputError if the graph is not in the source
 */
export async function synthesize(o: SynthOptions): Promise<SynthResult> {
  const source = openSource(o.source);
  const g = source.graphs.get(o.kg);
  if (!g) throw unknownGraphError(o.kg, source.graphs.keys(), "the source's kg/", o.source);
  if (!Number.isSafeInteger(o.triples) || o.triples < 1) throw new InputError(`--triples must be a positive integer, got ${o.triples}`);
  const abs = path.resolve(o.out);
  const src = path.resolve(o.source);
  if (abs === src || abs.startsWith(src + path.sep) || src.startsWith(abs + path.sep)) {
    throw new InputError('--out may not be the source directory, inside it, or contain it', { file: o.out });
  }
  if (fs.existsSync(abs) && (!fs.statSync(abs).isDirectory() || fs.readdirSync(abs).length > 0)) {
    throw new InputError('--out must be a new or empty directory', { file: o.out });
  }
  const questions = readQuestions(source.questionsFile).filter((q) => q.kg === o.kg);
  const hasher = await getHasher();
  const base: Triple[] = [];
  await scanTriples({ file: g.dataFile, format: g.dataFormat, graph: o.kg }, (t) => base.push(t));
  if (base.length === 0) throw new InputError(`graph ${o.kg} has no triples to replicate`, { file: g.dataFile });
  if (o.triples < base.length) o.progress?.(`synth: ${counted(o.triples, 'triple')} is less than the ${base.length} of ${o.kg}: writing a partial copy`);
  const subjects = new Set(base.map((t) => t.subject.value));
  const copies = Math.ceil(o.triples / base.length);
  const staged = new StagedOutput(o.out);
  try {
    fs.mkdirSync(path.join(staged.dir, 'kg'), { recursive: true });
    fs.mkdirSync(path.join(staged.dir, 'ontologies'), { recursive: true });
    const file = path.join(staged.dir, 'kg', `${o.kg}.nt`);
    const fd = fs.openSync(file, 'w');
    const writer = new Writer({ format: 'N-Triples' });
    let written = 0;
    try {
      for (let k = 0; k < copies && written < o.triples; k++) {
        const rename = (t: RDF.NamedNode): RDF.NamedNode => (k > 0 && subjects.has(t.value) ? DataFactory.namedNode(`${t.value}~${k}`) : t);
        const parts: string[] = [];
        for (let i = 0; i < base.length && written < o.triples; i++, written++) {
          const t = base[i];
          let object: RDF.Term = t.object;
          if (t.object.termType === 'NamedNode') {
            if (t.predicate.value !== RDF_TYPE) object = rename(t.object);
          } else if (k > 0 && NUMERIC.has(t.object.datatype.value) && Number.isFinite(Number(t.object.value))) {
            const delta = Number(hasher.h64(`${k} ${i}`, BigInt(o.seed)) % 3n) - 1;
            const v = Number(t.object.value) + delta;
            const lexical = t.object.datatype.value === `${XSD}integer` || /^-?\d+$/.test(t.object.value) ? String(Math.trunc(v)) : String(v);
            object = DataFactory.literal(lexical, t.object.datatype);
          }
          parts.push(writer.quadToString(rename(t.subject), t.predicate, object as RDF.Quad_Object));
        }
        fs.writeSync(fd, parts.join(''));
        o.progress?.(`synth: copy ${k + 1}/${copies}, ${counted(written, 'triple')}`);
      }
    } finally {
      fs.closeSync(fd);
    }
    if (g.ontologyFile) fs.copyFileSync(g.ontologyFile, path.join(staged.dir, 'ontologies', path.basename(g.ontologyFile)));
    fs.writeFileSync(
      path.join(staged.dir, 'dev.json'),
      JSON.stringify(
        questions.map((q) => ({ kg_name: q.kg, question: q.question, query: q.query })),
        null,
        1,
      ) + '\n',
    );
    staged.commit(() => false);
    return { file: path.join(o.out, 'kg', `${o.kg}.nt`), triples: written, copies, baseTriples: base.length, questions: questions.length };
  } catch (e) {
    staged.discard();
    throw e;
  }
}
