import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import clingo from 'clingo-wasm';

/** The pinned solver: clingo 5.8.1 as shipped by clingo-wasm 0.6.0 (see package.json). */
export const SOLVER = 'clingo-wasm 0.6.0 (clingo 5.8.1)';

/** Programs above this size are refused: clingo-wasm copies the text onto a 1 MiB stack and crashes, poisoning the instance, on larger ones. */
const MAX_PROGRAM_BYTES = 900_000;

/** Solver statistics that are the same on every run (kept in manifests). */
export interface SolverStatistics {
  /** clingo's verdict: `OPTIMUM FOUND`, `SATISFIABLE`, `UNSATISFIABLE`, `TIMEOUT`. */
  result: string;
  /** Whether the solver proved the returned model optimal. */
  optimal: boolean;
  /** Cost vector of the returned model, highest priority first. */
  costs: number[];
  /** Models reported on the way to the returned one. */
  models: number;
  /** Size of the program text in bytes (facts + encoding). */
  programBytes: number;
  choices?: number;
  conflicts?: number;
  restarts?: number;
  atoms?: number;
  rules?: number;
}

/** The best model of a solve, its statistics, and the wall time (ms; not deterministic). */
interface SolveResult {
  /** Shown atoms of the returned model, e.g. `select(3)`. */
  atoms: string[];
  statistics: SolverStatistics;
  wallMs: number;
}

/** Reads an encoding from the project's `asp/` folder. */
export function readEncoding(name: string): string {
  return fs.readFileSync(fileURLToPath(new URL(`../../asp/${name}`, import.meta.url)), 'utf8');
}

/**
 * Solves an optimisation program with clingo-wasm, asking for all models (`models = 0`, so that
 * clingo proves optimality: with `models = 1` the optimum is not guaranteed) and accepting a model as optimal only when clingo reports
 * `OPTIMUM FOUND`. clingo-wasm ignores `--time-limit`: after `timeoutMs` the solve is
 * aborted with `restart()` and the best model reported so far is returned, marked not optimal.
 * @throws Error when the program is too large, unsatisfiable, fails, or times out with no model
 */
export async function solve(program: string, timeoutMs: number): Promise<SolveResult> {
  const programBytes = Buffer.byteLength(program, 'utf8');
  if (programBytes > MAX_PROGRAM_BYTES) {
    throw new Error(`ASP program of ${programBytes} bytes exceeds the ${MAX_PROGRAM_BYTES}-byte limit of clingo-wasm`);
  }
  const started = performance.now();
  let last: { Value: string[]; Costs?: number[] } | undefined;
  let models = 0;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void clingo.restart();
  }, timeoutMs);
  let result;
  try {
    result = await clingo.run(program, 0, ['--stats'], (m) => {
      last = m;
      models++;
    });
  } finally {
    clearTimeout(timer);
  }
  const wallMs = performance.now() - started;
  if (result.Result === 'ERROR') {
    if (timedOut && last) {
      return {
        atoms: [...last.Value].sort(),
        statistics: { result: 'TIMEOUT', optimal: false, costs: last.Costs ?? [], models, programBytes },
        wallMs,
      };
    }
    await clingo.restart();
    throw new Error(timedOut ? `solver found no model within ${timeoutMs} ms` : `solver error: ${result.Error}`);
  }
  if (result.Result === 'UNSATISFIABLE') throw new Error('ASP program is unsatisfiable');
  const witnesses = result.Call.flatMap((c) => c.Witnesses);
  const best = witnesses[witnesses.length - 1];
  // clingo's statistics (clingo --stats=2), which clingo-wasm's types do not declare.
  type Count = number | undefined;
  const stats = (result as unknown as { Stats?: { Core?: { Choices?: Count; Conflicts?: Count; Restarts?: Count }; LP?: { Atoms?: Count; Rules?: { Final?: Count } } } }).Stats;
  return {
    atoms: [...best.Value].sort(),
    statistics: {
      result: result.Result,
      optimal: result.Result === 'OPTIMUM FOUND',
      costs: best.Costs ?? [],
      models: result.Models.Number,
      programBytes,
      choices: stats?.Core?.Choices,
      conflicts: stats?.Core?.Conflicts,
      restarts: stats?.Core?.Restarts,
      atoms: stats?.LP?.Atoms,
      rules: stats?.LP?.Rules?.Final,
    },
    wallMs,
  };
}

/** Parses the integer arguments of shown atoms named `name`, e.g. `select(3)` → [3]. */
export function atomArgs(atoms: string[], name: string): number[][] {
  const out: number[][] = [];
  const prefix = `${name}(`;
  for (const a of atoms) {
    if (a.startsWith(prefix) && a.endsWith(')')) out.push(a.slice(prefix.length, -1).split(',').map(Number));
  }
  return out;
}
