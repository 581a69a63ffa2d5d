import fs from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { InputError } from '../common/errors.js';

/** One benchmark question: a natural-language question with its gold SPARQL query. */
export interface Question {
  /** 0-based position in the questions file. */
  index: number;
  /** Name of the knowledge graph the question is asked over. */
  kg: string;
  question: string;
  /** Gold query text as written in the source (Spider4SPARQL: undeclared `:` prefix). */
  query: string;
}

/**
 * One distinct (graph, query text) pair. Many questions share one query; each pair is analysed
 * once and keeps the indices of all its questions.
 */
export interface GoldQuery {
  /** Stable identifier `<kg>/q<N>`, N counting distinct queries of the graph from 1 in file order. */
  id: string;
  kg: string;
  /** Query text exactly as in the source. */
  text: string;
  /** Indices (into the questions list) of every question with this query, ascending. */
  questions: number[];
}

/**
 * Reads questions from a JSON array of `{kg_name, question, query}` or a CSV file with the header
 * `kg_name,question,query`.
 * @throws InputError naming the file and the entry (JSON index or CSV line) that is malformed
 */
export function readQuestions(file: string): Question[] {
  const text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  const rows: { kg_name?: unknown; question?: unknown; query?: unknown; where: string }[] = [];
  if (file.toLowerCase().endsWith('.csv')) {
    let records: Record<string, string>[];
    try {
      records = parseCsv(text, {
        columns: (header: string[]) => {
          const repeated = header.filter((c, i) => header.indexOf(c) !== i);
          if (repeated.length) throw new InputError(`CSV header repeats the column "${repeated[0]}"`, { file });
          return header;
        },
        skip_empty_lines: true,
        bom: true,
        info: false,
      });
    } catch (e) {
      if (e instanceof InputError) throw e;
      throw new InputError(`CSV does not parse: ${(e as Error).message}`, { file });
    }
    const header = records.length > 0 ? Object.keys(records[0]) : [];
    for (const col of ['kg_name', 'question', 'query']) {
      if (records.length > 0 && !header.includes(col)) {
        throw new InputError(`CSV header lacks the column "${col}" (expected kg_name,question,query)`, { file });
      }
    }
    records.forEach((r, i) => rows.push({ ...r, where: `record ${i + 1} (after the header)` }));
  } else {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new InputError(`JSON does not parse: ${(e as Error).message}`, { file });
    }
    if (!Array.isArray(data)) throw new InputError('expected a JSON array of {kg_name, question, query}', { file });
    data.forEach((r, i) => rows.push({ ...(r && typeof r === 'object' ? r : {}), where: `entry ${i}` }));
  }
  return rows.map((r, index) => {
    for (const key of ['kg_name', 'question', 'query'] as const) {
      if (typeof r[key] !== 'string' || (key !== 'question' && (r[key] as string).trim() === '')) {
        throw new InputError(`${r.where}: field "${key}" is missing or not a non-empty string`, { file });
      }
    }
    return { index, kg: r.kg_name as string, question: r.question as string, query: r.query as string };
  });
}

/**
 * Groups questions into distinct (graph, query text) pairs, in order of first appearance.
 * @returns one GoldQuery per pair; ids are `<kg>/q<N>` with N counted per graph from 1
 */
export function distinctQueries(questions: Question[]): GoldQuery[] {
  const byKey = new Map<string, GoldQuery>();
  const perGraph = new Map<string, number>();
  for (const q of questions) {
    const key = `${q.kg}\u0000${q.query}`;
    let g = byKey.get(key);
    if (!g) {
      const n = (perGraph.get(q.kg) ?? 0) + 1;
      perGraph.set(q.kg, n);
      g = { id: `${q.kg}/q${n}`, kg: q.kg, text: q.query, questions: [] };
      byKey.set(key, g);
    }
    g.questions.push(q.index);
  }
  return [...byKey.values()];
}
