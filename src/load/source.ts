import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { checkGraphName } from '../build/names.js';
import { EXTENSIONS, formatOf, type RdfFormat } from './formats.js';

/** One knowledge graph of a benchmark source: its data file and, if present, its ontology. */
export interface GraphSource {
  /** Graph name, e.g. `concert_singer` (the `kg_name` of the questions). */
  name: string;
  /** Path of the data file (`kg/<name>.nt`, `.ttl`, `.rdf`, `.owl` or `.xml`). */
  dataFile: string;
  dataFormat: RdfFormat;
  /** Path of the ontology (`ontologies/<name>.owl`, `.rdf`, `.xml` or `.ttl`), if there is one. */
  ontologyFile?: string;
  ontologyFormat?: RdfFormat;
}

/**
 * A benchmark source directory in the Spider4SPARQL layout:
 * `dev.json` (or a CSV `kg_name,question,query`), `kg/<name>.<ext>`, `ontologies/<name>.<ext>`.
 */
interface BenchmarkSource {
  /** The directory as given. */
  dir: string;
  /** Path of the questions file (JSON array or CSV). */
  questionsFile: string;
  /** Graphs found under `kg/`, by name, sorted by name. */
  graphs: Map<string, GraphSource>;
}

const QUESTION_FILES = ['dev.json', 'questions.json', 'dev.csv', 'questions.csv'];

/**
 * Finds the questions file, graphs and ontologies of a source directory.
 * @param dir the source directory
 * @param questionsFile an explicit questions file (JSON or CSV); default: the first of
 *   `dev.json`, `questions.json`, `dev.csv`, `questions.csv` in `dir`
 * @throws InputError if the directory, the questions file or the `kg/` folder is missing, or if
 *   two data files give the same graph name
 */
export function openSource(dir: string, questionsFile?: string): BenchmarkSource {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new InputError('source directory not found', { file: dir });
  }
  let qFile = questionsFile;
  if (qFile === undefined) {
    qFile = QUESTION_FILES.map((f) => path.join(dir, f)).find((f) => fs.existsSync(f));
    if (qFile === undefined) {
      throw new InputError(`no questions file (looked for ${QUESTION_FILES.join(', ')})`, { file: dir });
    }
  } else if (!fs.existsSync(qFile)) {
    throw new InputError('questions file not found', { file: qFile });
  }
  if (!fs.statSync(qFile).isFile()) throw new InputError('questions file is not a regular file', { file: qFile });
  const kgDir = path.join(dir, 'kg');
  if (!fs.existsSync(kgDir)) throw new InputError('no kg/ folder with knowledge graphs', { file: dir });
  const ontDir = path.join(dir, 'ontologies');
  const graphs = new Map<string, GraphSource>();
  for (const file of fs.readdirSync(kgDir).sort()) {
    const format = formatOf(file);
    if (!format) continue;
    const name = file.slice(0, file.length - path.extname(file).length);
    checkGraphName(name, path.join(kgDir, file));
    if (!fs.statSync(path.join(kgDir, file)).isFile()) throw new InputError('data file is not a regular file', { file: path.join(kgDir, file) });
    const existing = graphs.get(name);
    if (existing) {
      throw new InputError(`two data files for graph ${name}: ${path.basename(existing.dataFile)} and ${file}`, {
        file: kgDir,
      });
    }
    const g: GraphSource = { name, dataFile: path.join(kgDir, file), dataFormat: format };
    for (const ext of [...EXTENSIONS['rdf-xml'], ...EXTENSIONS.turtle]) {
      const ont = path.join(ontDir, name + ext);
      if (fs.existsSync(ont)) {
        if (!fs.statSync(ont).isFile()) throw new InputError('ontology is not a regular file', { file: ont });
        g.ontologyFile = ont;
        g.ontologyFormat = formatOf(ont);
        break;
      }
    }
    graphs.set(name, g);
  }
  return { dir, questionsFile: qFile, graphs };
}
