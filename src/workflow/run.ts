/**
 * `fkgqa run`: the whole loop in one command, from a build to a scored report and a run viewer:
 * gold answers (`fkgqa stats`, when the state folder lacks them) → the shard
 * endpoints (`fkgqa serve` in this process, or the serve already running on the build) → the agent
 * on the questions (`fkgqa eval`: a scripted agent or a model) → `fkgqa score` → `fkgqa view`.
 *
 * Everything goes to one output folder: `<setup>-<model or agent>.jsonl` (the run file; runs
 * already in it are skipped, so an interrupted loop resumes), and over every run file in the
 * folder (so a scripted agent's runs and a model's are scored side by side): `report.txt`,
 * `report.html`, `per-run.csv` and `view.html`. A serve started here is stopped at the end, on an
 * error, and when `signal` aborts (Ctrl-C): its endpoints file and lock are removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { writeFileAtomic } from '../common/output.js';
import { openBuild, readBuild } from '../build/open.js';
import { readGoldAnswers } from '../build/gold-answers.js';
import { readNeededShards } from '../build/fan-out.js';
import { stateDir, STATE_FILES } from '../build/state.js';
import { readServeEndpoints } from '../federation/registry.js';
import { computeStats } from '../report/stats.js';
import { serve, type ShardServer } from '../serve/server.js';
import { runEval, type EvalOptions, type EvalSummary } from '../eval/eval.js';
import { score, type ScoreReport } from '../score/score.js';
import { formatPerRunCsv, formatScoreHtml, formatScoreText } from '../score/format.js';
import { viewRuns } from '../view/view.js';
import { readRunFiles } from '../eval/run-reader.js';
import { counted } from '../common/strings.js';

/**
 * Options of `runLoop`: where, and the agent with every option of `fkgqa eval` (`EvalOptions`:
 * setup, model, selection, limits, engine), passed on as they are; the build, state folder, run
 * file and endpoints are the loop's own. Defaults that differ from eval's: `agent` oracle, `tools`
 * in-process (the MCP server built in this process, no process per run).
 */
export interface LoopOptions extends Partial<Omit<EvalOptions, 'shards' | 'endpoints' | 'state' | 'out' | 'progress' | 'warn'>> {
  /** The build. */
  shards: string;
  /** State folder of the build (default `<build>.state`): gold answers, the serve's endpoints file. */
  state?: string;
  /** Output folder (created): the run file, report.txt, report.html, per-run.csv, view.html. */
  out: string;
  /** Port of the serve started here when none runs on the build (default 0: any free port). */
  port?: number;
  /** Aborting it (Ctrl-C) stops the loop at once: a serve started here is stopped, `runLoop` rejects with `LoopInterrupted`. */
  signal?: AbortSignal;
  progress?: (line: string) => void;
}

/** What `runLoop` did and wrote. */
export interface LoopResult {
  /** The output folder (absolute). */
  out: string;
  /** The run file of this loop's agent. */
  runFile: string;
  /** Every run file of the folder that was scored and viewed. */
  runFiles: string[];
  /** `computed` when gold answers were missing and `fkgqa stats` ran, else `stored`. */
  gold: 'computed' | 'stored';
  /** `started` (and stopped) here, or `running` (a serve already running on the build was used). */
  serve: 'started' | 'running';
  eval: EvalSummary;
  report: ScoreReport;
  /** Files written: report.txt, report.html, per-run.csv, view.html (absolute paths). */
  files: { reportText: string; reportHtml: string; perRunCsv: string; view: string };
}

/** The error `runLoop` rejects with when `signal` aborts. */
class LoopInterrupted extends Error {
  constructor(readonly reason: string) {
    super(`interrupted (${reason})`);
    this.name = 'LoopInterrupted';
  }
}

/** A file name part from a model or agent name (`qwen3-8b`, `gpt-5.2`, `oracle`). */
const slug = (s: string) => s.replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._]+/, '') || 'run';

/**
 * Runs the loop (module comment).
 * @throws InputError for a build that does not check, a model agent without base URL or model,
 *   and whatever the steps refuse (each names its file or option); LoopInterrupted on abort
 */
export async function runLoop(o: LoopOptions): Promise<LoopResult> {
  const progress = o.progress ?? (() => {});
  const agent = o.agent ?? 'oracle';
  if (agent === 'llm' && (!o.baseUrl || !o.model)) throw new InputError('a model needs --base-url (or OPENAI_BASE_URL) and --model (or give --agent oracle|trivial|single)');
  const opened = openBuild(o.shards, { checkShards: false });
  const digest = opened.build.outputDigest;
  const graphs = readBuild(o.shards, o.kgs).map((g) => g.graph);
  const out = path.resolve(o.out);
  const existing = fs.statSync(out, { throwIfNoEntry: false });
  if (existing && !existing.isDirectory()) throw new InputError('--out is a file: give the output folder (run files and reports are written into it)', { file: o.out });
  checkRunFolder(o.out, digest);
  fs.mkdirSync(out, { recursive: true });
  const setup = o.setup ?? 'baseline';
  const runFile = path.join(out, `${setup}-${slug(agent === 'llm' ? o.model! : agent)}.jsonl`);

  let stopServe: (() => Promise<void>) | undefined;
  let aborted: ((e: Error) => void) | undefined;
  const abortPromise = new Promise<never>((_, reject) => (aborted = reject));
  abortPromise.catch(() => {});
  const onAbort = () => aborted!(new LoopInterrupted(String(o.signal?.reason ?? 'aborted')));
  if (o.signal?.aborted) throw new LoopInterrupted(String(o.signal.reason ?? 'aborted'));
  o.signal?.addEventListener('abort', onAbort, { once: true });
  const step = <T>(p: Promise<T>) => Promise.race([p, abortPromise]);
  try {
    // 1. Gold answers and the shards each answer needs (the oracle needs them; score needs the answers).
    const missing = graphs.filter((kg) => !readGoldAnswers(o.shards, kg, digest, { state: o.state }) || !readNeededShards(o.shards, kg, digest, o.state));
    let gold: LoopResult['gold'] = 'stored';
    if (missing.length > 0) {
      progress(`fkgqa run: no gold answers stored for ${missing.join(', ')}: running fkgqa stats (once per build)`);
      await step(computeStats({ shards: o.shards, state: o.state, kgs: missing, progress }));
      gold = 'computed';
    }
    // 2. The endpoints: the serve running on the build, else one started here.
    let endpointsFile: string;
    let served: LoopResult['serve'];
    let server: ShardServer | undefined;
    const running = fs.existsSync(path.join(stateDir(o.shards, o.state), STATE_FILES.endpoints)) ? tryRunning(o.shards, o.state) : undefined;
    if (running) {
      endpointsFile = running;
      served = 'running';
      progress(`fkgqa run: using the fkgqa serve already running on the build (${endpointsFile})`);
    } else {
      server = await step(serve({ shards: o.shards, state: o.state, kgs: o.kgs, port: o.port ?? 0, progress }));
      stopServe = async () => {
        const s = server!;
        server = undefined;
        await s.close();
      };
      endpointsFile = path.join(stateDir(o.shards, o.state), STATE_FILES.endpoints);
      served = 'started';
      progress(`fkgqa run: serving ${counted(server.endpoints.length, 'endpoint')} (stopped at the end; endpoints file ${endpointsFile})`);
    }
    // 3. The agent.
    const summary = await step(
      runEval({
        ...o,
        shards: o.shards,
        endpoints: endpointsFile,
        state: o.state,
        setup,
        agent,
        temperature: agent === 'llm' ? (o.temperature ?? 0) : undefined,
        out: runFile,
        tools: o.tools ?? 'in-process',
        timeoutMs: o.timeoutMs ?? 30_000,
        // A scripted agent's trivial or oracle form can be longer than the reference server's 8,000
        // characters (concert_singer/q21: 8,131); that is not the agent's fault, so scripted agents get
        // 1,000,000 unless told otherwise (as bench/scripted-agents.js). A model keeps eval's default.
        maxQueryChars: o.maxQueryChars,
        progress,
      }),
    );
    if (stopServe) {
      await stopServe();
      stopServe = undefined;
      progress('fkgqa run: serve stopped');
    }
    // 4. Score and view every run file of the folder.
    const runFiles = fs
      .readdirSync(out)
      .filter((f) => f.endsWith('.jsonl'))
      .sort()
      .map((f) => path.join(out, f));
    const report = await step(score({ runs: runFiles, shards: o.shards, state: o.state, progress }));
    const files = { reportText: path.join(out, 'report.txt'), reportHtml: path.join(out, 'report.html'), perRunCsv: path.join(out, 'per-run.csv'), view: path.join(out, 'view.html') };
    writeFileAtomic(files.reportText, formatScoreText(report));
    writeFileAtomic(files.reportHtml, formatScoreHtml(report));
    writeFileAtomic(files.perRunCsv, formatPerRunCsv(report));
    const page = await step(viewRuns({ runs: runFiles, shards: o.shards, state: o.state, report, progress }));
    writeFileAtomic(files.view, page.html);
    return { out, runFile, runFiles, gold, serve: served, eval: summary, report, files };
  } finally {
    o.signal?.removeEventListener('abort', onAbort);
    if (stopServe) {
      await stopServe();
      progress('fkgqa run: serve stopped');
    }
  }
}

/**
 * Refuses an output folder that holds runs of another build, before anything starts: the run file
 * would refuse them, and the runs of a folder are scored together, which `fkgqa score` refuses
 * across builds. The message names a folder for this build's runs: `<out>-<first 8 hex digits of
 * the output digest>`. Then every run file of the folder is read as the scoring step reads it
 * (`readRunFiles`, files being written taken as partial: the eval step refuses those), so a run
 * file it cannot read (an old format, a broken record, a run in two files) is refused before the
 * evaluation, not after it.
 * @param out the `--out` folder as given
 * @param digest this build's output digest
 * @throws InputError naming the run file and line of the first run of another build, or of the
 *   first record the scoring step would refuse
 */
function checkRunFolder(out: string, digest: string): void {
  const dir = path.resolve(out);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) return;
  for (const name of fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()) {
    const file = path.join(dir, name);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    for (const [i, text] of lines.entries()) {
      let made: unknown;
      try {
        made = (JSON.parse(text) as { build?: { outputDigest?: unknown } } | null)?.build?.outputDigest;
      } catch {
        continue; // not a run record (or a torn last line): the run file and score say so
      }
      if (typeof made !== 'string' || made === digest) continue;
      const other = `${out.replace(/[\\/]+$/, '')}-${digest.slice(0, 8)}`;
      throw new InputError(
        `${out} holds runs of another build (output digest ${made.slice(0, 16)}; this build's is ${digest.slice(0, 16)}), and the runs of a folder are scored together: ` +
          `give this build's runs their own folder, e.g. --out ${other}, or move ${out} away`,
        { file, line: i + 1 },
      );
    }
  }
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => path.join(dir, f));
  try {
    readRunFiles(files, { partial: true });
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    throw new InputError(`${e.message} (the runs of ${out} are scored together, so nothing was started: fix or remove that run file, or give another --out)`);
  }
}

/** The endpoints file of a serve running on the build, or undefined when there is none (or it is stale). */
function tryRunning(shards: string, state: string | undefined): string | undefined {
  try {
    readServeEndpoints(shards, state);
    return path.join(stateDir(shards, state), STATE_FILES.endpoints);
  } catch (e) {
    if (e instanceof InputError) return undefined;
    throw e;
  }
}
