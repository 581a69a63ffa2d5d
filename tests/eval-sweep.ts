/**
 * The kill sweep of `fkgqa eval`'s run file: eval (a scripted agent, fast) is
 * killed with SIGKILL at seeded random instants, and every few instants killed by fault injection
 * in the middle of an append (`FKGQA_FAULT_AT=append:<k>`: half a line written, then SIGKILL; a
 * timer hits the microseconds of an append too rarely to test torn lines otherwise); after each
 * kill the file is checked and eval resumed on it. Used by tests/eval-crash.test.ts (a few
 * instants) and tests/eval-crash.slow.test.ts (many).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { seededRandom } from '../src/common/random.js';
import type { RunRecord } from '../src/eval/record.js';
import { ROOT } from './helpers.js';

export interface SweepOptions {
  build: string;
  endpointsFile: string;
  out: string;
  seed: number;
  /** Kills (timer or fault injection). */
  instants: number;
  /** Every this many instants, a fault injection instead of a timer (0: never). */
  faultEvery: number;
  /** Timer kills fall uniformly in [0, maxDelayMs) after eval printed its plan. */
  maxDelayMs: number;
  /** `--repeats` over the 8 questions of each graph of `kgs`. */
  repeats: number;
  /** The demo graphs whose questions run (default library; each has 8 questions). */
  kgs?: string[];
  log?: (line: string) => void;
}

export interface SweepResult {
  instants: number;
  /** Kills that hit a running eval (the others found it finished). */
  killedWhileRunning: number;
  faults: number;
  /** Fault injections that killed eval (an append happened: the file was not finished yet). */
  faultKills: number;
  /** Fault injections at an instant when at least as many runs remained as the append they kill at (each must kill). */
  faultsArmed: number;
  /** Kills after which the file ended in a torn line. */
  tornSeen: number;
  /** Resumes that said on stderr that they cut a torn line away. */
  repairsSaid: number;
  /** Runs whose whole line was in the file after some kill and missing later. */
  runsLost: number;
  /** Whole lines beyond the first with the same run id, at any check. */
  duplicates: number;
  /** Whole lines that did not parse, at any check. */
  unparsable: number;
  planned: number;
  /** Distinct runs in the file at the end (after a last resume without kill). */
  finalRuns: number;
  finalLines: number;
  finalCode: number | null;
}

/** The whole lines of a run file and the torn tail (text after the last newline). */
function inspect(file: string): { whole: string[]; torn: string } {
  if (!fs.existsSync(file)) return { whole: [], torn: '' };
  const text = fs.readFileSync(file, 'utf8');
  const cut = text.lastIndexOf('\n') + 1;
  return {
    whole: text
      .slice(0, cut)
      .split('\n')
      .filter((l) => l !== ''),
    torn: text.slice(cut),
  };
}

/** Runs the sweep (module comment). */
export async function killSweep(o: SweepOptions): Promise<SweepResult> {
  const rand = seededRandom(o.seed, 'eval-kill');
  const args = [
    path.join(ROOT, 'bin/fkgqa.js'),
    'eval',
    '--shards',
    o.build,
    '--endpoints',
    o.endpointsFile,
    '--agent',
    'single',
    '--no-probe',
    '--tools',
    'in-process',
    '--kg',
    ...(o.kgs ?? ['library']),
    '--repeats',
    String(o.repeats),
    '--out',
    o.out,
  ];
  const r: SweepResult = {
    instants: 0,
    killedWhileRunning: 0,
    faults: 0,
    faultKills: 0,
    faultsArmed: 0,
    tornSeen: 0,
    repairsSaid: 0,
    runsLost: 0,
    duplicates: 0,
    unparsable: 0,
    planned: 8 * (o.kgs ?? ['library']).length * o.repeats,
    finalRuns: 0,
    finalLines: 0,
    finalCode: null,
  };
  const ever = new Set<string>();
  let tornBefore = false;
  /** Distinct runs in the file after the last instant. */
  let done = 0;
  const check = () => {
    const { whole, torn } = inspect(o.out);
    const ids: string[] = [];
    for (const l of whole) {
      try {
        ids.push((JSON.parse(l) as RunRecord).id);
      } catch {
        r.unparsable++;
      }
    }
    r.duplicates += ids.length - new Set(ids).size;
    for (const id of ever) if (!ids.includes(id)) r.runsLost++;
    for (const id of ids) ever.add(id);
    return { ids, torn };
  };
  const runOnce = (env: Record<string, string>, killAfterPlanMs: number | undefined) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; killed: boolean }>((resolve) => {
      const child = spawn(process.execPath, args, { env: { ...process.env, ...env } });
      let stderr = '';
      let killed = false;
      let timer: NodeJS.Timeout | undefined;
      child.stderr.on('data', (d) => {
        stderr += d;
        if (killAfterPlanMs !== undefined && !timer && stderr.includes(' to run (')) {
          timer = setTimeout(() => {
            if (child.exitCode === null && child.signalCode === null) {
              killed = true;
              child.kill('SIGKILL');
            }
          }, killAfterPlanMs);
        }
      });
      child.stdout.resume();
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stderr, killed });
      });
    });

  for (let i = 0; i < o.instants; i++) {
    const fault = o.faultEvery > 0 && (i + 1) % o.faultEvery === 0;
    const delay = Math.floor(rand() * o.maxDelayMs);
    const k = 1 + Math.floor(rand() * 3);
    if (fault && r.planned - done >= k) r.faultsArmed++;
    const x = fault ? await runOnce({ FKGQA_FAULT_AT: `append:${k}` }, undefined) : await runOnce({}, delay);
    r.instants++;
    if (fault) r.faults++;
    if (fault && x.signal === 'SIGKILL') r.faultKills++;
    if (x.killed || x.signal === 'SIGKILL') r.killedWhileRunning++;
    if (tornBefore && x.stderr.includes('cut away a torn last line')) r.repairsSaid++;
    const c = check();
    done = c.ids.length;
    tornBefore = c.torn !== '';
    if (tornBefore) r.tornSeen++;
    o.log?.(`instant ${i + 1}/${o.instants}: ${fault ? `fault append:${k}` : `kill after ${delay} ms`} → ${x.signal ?? `exit ${x.code}`}, ${c.ids.length} runs${tornBefore ? ', torn last line' : ''}`);
  }
  const last = await runOnce({}, undefined);
  if (tornBefore && last.stderr.includes('cut away a torn last line')) r.repairsSaid++;
  r.finalCode = last.code;
  const c = check();
  r.finalRuns = new Set(c.ids).size;
  r.finalLines = c.ids.length;
  if (c.torn !== '') r.unparsable++;
  return r;
}
