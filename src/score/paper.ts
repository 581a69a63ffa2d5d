/**
 * The figures the FKGQA paper reports for its agent evaluation (section 6 of
 * `../shared/papers/000_462b64a14f238500.txt`): GPT-5.2 and Qwen3-8B, setups baseline, high_level,
 * void_tool; 5,814 runs. Shares are percentages; a figure the paper gives as a range over setups
 * is recorded for each setup it covers with `range`. Figures for "successful" runs are over the
 * correct runs (the paper's wording).
 */

/** A model of the paper. */
type PaperModel = 'GPT-5.2' | 'Qwen3-8B';
export const PAPER_MODELS: PaperModel[] = ['GPT-5.2', 'Qwen3-8B'];

/** Figure names shared by the score report and the paper table. */
export type FigureName =
  | 'accuracy %'
  | 'syntactic validity %'
  | 'consultation of correct runs %'
  | 'trivial federation of correct runs %'
  | 'tokens per run (median)'
  | 'runtime per run (median, s)'
  | 'LLM calls per run'
  | 'SPARQL calls per run'
  | 'VoID calls per run';

/** One published figure; `value` is null where the paper gives none for that model and setup. */
interface PaperFigure {
  figure: FigureName;
  model: PaperModel;
  /** A setup, or `all` for a figure over every setup. */
  setup: string;
  value: number | null;
  /** The paper's text when it gives a range or an overall figure. */
  note?: string;
}

const f = (figure: FigureName, model: PaperModel, setup: string, value: number | null, note?: string): PaperFigure => ({ figure, model, setup, value, ...(note ? { note } : {}) });

/** Every figure of section 6 used in the comparison. */
const PAPER_FIGURES: PaperFigure[] = [
  f('accuracy %', 'GPT-5.2', 'baseline', 42.1),
  f('accuracy %', 'GPT-5.2', 'high_level', 45.4),
  f('accuracy %', 'GPT-5.2', 'void_tool', 43.5),
  f('accuracy %', 'Qwen3-8B', 'baseline', 13.1),
  f('accuracy %', 'Qwen3-8B', 'high_level', 13.2),
  f('accuracy %', 'Qwen3-8B', 'void_tool', 13.8),
  ...['baseline', 'high_level', 'void_tool'].map((s) => f('syntactic validity %', 'GPT-5.2', s, null, '97.4–98.0 across setups; 75.7 overall (29,431 of 38,886 queries, both models)')),
  f('syntactic validity %', 'Qwen3-8B', 'baseline', null, '41.5–61.1 across setups'),
  f('syntactic validity %', 'Qwen3-8B', 'high_level', 61.1, 'highest of 41.5–61.1'),
  f('syntactic validity %', 'Qwen3-8B', 'void_tool', null, '41.5–61.1 across setups'),
  f('consultation of correct runs %', 'GPT-5.2', 'baseline', 90.7),
  f('consultation of correct runs %', 'GPT-5.2', 'high_level', 25.8),
  f('consultation of correct runs %', 'GPT-5.2', 'void_tool', 91.7),
  f('consultation of correct runs %', 'Qwen3-8B', 'void_tool', 98.6),
  f('trivial federation of correct runs %', 'GPT-5.2', 'baseline', null, '90.2–91.7 in baseline and void_tool'),
  f('trivial federation of correct runs %', 'GPT-5.2', 'high_level', 11.0),
  f('trivial federation of correct runs %', 'GPT-5.2', 'void_tool', null, '90.2–91.7 in baseline and void_tool'),
  ...['baseline', 'high_level', 'void_tool'].map((s) => f('trivial federation of correct runs %', 'Qwen3-8B', s, null, '68.5–98.6 across setups')),
  f('tokens per run (median)', 'GPT-5.2', 'all', 20480, 'min 2,457, max 172,614'),
  f('tokens per run (median)', 'Qwen3-8B', 'all', 8288, 'min 1,550, max 335,299'),
  f('runtime per run (median, s)', 'GPT-5.2', 'all', 16.3, 'all runs: median 22.2 s, max 11 min'),
  f('runtime per run (median, s)', 'Qwen3-8B', 'all', 31.9, 'all runs: median 22.2 s, max 11 min'),
  f('LLM calls per run', 'GPT-5.2', 'all', 5.5),
  f('LLM calls per run', 'Qwen3-8B', 'all', 7.2),
  f('SPARQL calls per run', 'GPT-5.2', 'all', 9.0),
  f('SPARQL calls per run', 'GPT-5.2', 'baseline', 11.1),
  f('SPARQL calls per run', 'GPT-5.2', 'high_level', 6.2),
  f('SPARQL calls per run', 'Qwen3-8B', 'all', 6.4),
  f('SPARQL calls per run', 'Qwen3-8B', 'baseline', 6.4),
  f('SPARQL calls per run', 'Qwen3-8B', 'high_level', 6.8),
  f('VoID calls per run', 'GPT-5.2', 'void_tool', null, '1.0–1.1 in the void_tool setup'),
  f('VoID calls per run', 'Qwen3-8B', 'void_tool', null, '1.0–1.1 in the void_tool setup'),
];

/** Qwen3-8B's failure classes as shares of its failed queries (section 6). */
export const PAPER_QWEN_FAILURES = { parse: 41.6, prefix: 24.3, braces: 1.3, service: 1.5 } as const;

/**
 * The paper's figure for a model, setup and figure name: the setup's own value, else the value over
 * all setups; with the paper's note.
 */
export function paperFigure(figure: FigureName, model: PaperModel, setup: string): { value: number | null; note?: string } | undefined {
  const own = PAPER_FIGURES.find((p) => p.figure === figure && p.model === model && p.setup === setup);
  const all = PAPER_FIGURES.find((p) => p.figure === figure && p.model === model && p.setup === 'all');
  const hit = own && own.value !== null ? own : (all ?? own);
  return hit ? { value: hit.value, note: hit.note } : undefined;
}
