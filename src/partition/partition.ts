import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';
import { sha256OfFile } from '../common/hash.js';
import { checkOutputDir, lockHolderOf, StagedOutput, writeJson } from '../common/output.js';
import { codeDigest, TOOL } from '../common/version.js';
import { catalogueFileTexts } from '../describe/index.js';
import { distinctQueries, readQuestions } from '../load/questions.js';
import { openSource } from '../load/source.js';
import { SOLVER } from '../plan/solver.js';
import { parseQuery } from '../sparql/parse.js';
import { writeBenchmark } from './benchmark.js';
import { buildGraph, ms } from './graph.js';
import type { GraphBuild, PartitionResult } from './manifest.js';
import { iriError } from '../common/iri.js';
import { endpointUrl } from '../describe/index.js';
import { methodOptionsOf, type PartitionOptions } from './options.js';
import { PRESETS } from './presets.js';
import { digestTree, isBuildEntry, readPrevious } from './output.js';
import { unknownGraphError } from '../build/names.js';
import { STATE_FILES, stateDir } from '../build/state.js';
import { counted } from '../common/strings.js';

/**
 * Checks the options before anything is read.
 * @throws InputError naming the option (as the CLI spells it) and what is wrong
 */
export function validatePartitionOptions(o: PartitionOptions): void {
  if (!Number.isInteger(o.buckets) || o.buckets < 2 || o.buckets > 1024) {
    throw new InputError(`--buckets must be an integer from 2 to 1024, got ${o.buckets}`);
  }
  if (!Number.isSafeInteger(o.seed) || o.seed < 0) throw new InputError(`--seed must be a non-negative integer, got ${o.seed}`);
  if (o.layout !== 'compact' && o.layout !== 'separate') throw new InputError(`--layout must be compact or separate, got "${o.layout}"`);
  if (o.horizontalCandidates !== undefined && o.horizontalCandidates !== 'unless-class' && o.horizontalCandidates !== 'every-query') {
    throw new InputError(`--horizontal-candidates must be unless-class or every-query, got "${o.horizontalCandidates}"`);
  }
  if (o.horizontalPlacement !== undefined && !['own-buckets', 'all-shards', 'every-shard'].includes(o.horizontalPlacement)) {
    throw new InputError(`--horizontal-placement must be own-buckets, all-shards or every-shard, got "${o.horizontalPlacement}"`);
  }
  if (o.predicateCandidates !== undefined && o.predicateCandidates !== 'all-pairs' && o.predicateCandidates !== 'no-rdf-type') {
    throw new InputError(`--predicate-candidates must be all-pairs or no-rdf-type, got "${o.predicateCandidates}"`);
  }
  if (o.preset !== undefined && !Object.hasOwn(PRESETS, o.preset)) throw new InputError(`--preset must be one of ${Object.keys(PRESETS).join(', ')}, got "${o.preset}"`);
  if (!(o.solverTimeoutMs > 0)) throw new InputError(`--solver-timeout must be positive, got ${o.solverTimeoutMs}`);
  const prefixError = iriError(o.defaultPrefix) ?? (/^[a-z][a-z0-9+.-]*:/i.test(o.defaultPrefix) ? undefined : 'not absolute');
  if (prefixError) throw new InputError(`--default-prefix must be an absolute IRI, got "${o.defaultPrefix}" (${prefixError})`);
  if (o.endpointBase !== undefined) endpointUrl(o.endpointBase, 'x');
}

/**
 * `fkgqa partition`: builds the federated shards of every selected graph (load → analyse → plan →
 * materialise → verify → describe), writes `<out>/<kg>/shard<N>.nt`, `<out>/<kg>/manifest.json`,
 * the VoID of every shard (`<out>/<kg>/shard<N>_void.ttl`, `…_void_extended.ttl`) and
 * `<out>/catalogue.json|ttl` (unless `void: false`), `<out>/benchmark.json` and `<out>/build.json`,
 * and checks the guarantees. Output is staged and moves into `out` only when every graph has been
 * built.
 * @throws InputError for bad input (nothing is written then)
 */
export async function partition(options: PartitionOptions): Promise<PartitionResult> {
  const t0 = performance.now();
  validatePartitionOptions(options);
  checkOutputDir(options.out, options.source);
  const log = options.progress ?? (() => {});
  const source = openSource(options.source, options.questions);
  const questions = readQuestions(source.questionsFile);
  const queries = distinctQueries(questions);
  const warnings: string[] = [];

  const named = [...new Set(questions.map((q) => q.kg))].sort();
  if (options.kgs?.length) {
    for (const kg of options.kgs) {
      if (!named.includes(kg) && !source.graphs.has(kg)) {
        throw unknownGraphError(kg, [...named, ...source.graphs.keys()], 'the source (neither in the questions nor in kg/)', source.dir);
      }
    }
  }
  const selected = named.filter((kg) => !options.kgs?.length || options.kgs.includes(kg));
  for (const kg of selected) {
    if (!source.graphs.has(kg)) {
      const q = questions.find((x) => x.kg === kg)!;
      throw new InputError(`question ${q.index} names graph "${kg}", which has no data file ${path.join(source.dir, 'kg', `${kg}.nt`)} (or .ttl, .rdf, .owl, .xml)`, { file: source.questionsFile });
    }
  }
  for (const kg of source.graphs.keys()) {
    if (!named.includes(kg) && (!options.kgs?.length || options.kgs.includes(kg))) {
      if (options.kgs?.includes(kg)) throw new InputError(`--kg ${kg}: the graph has a data file but no questions`, { file: source.questionsFile });
      warnings.push(`graph ${kg} has a data file but no questions: skipped`);
    }
  }
  if (selected.length === 0) throw new InputError('no questions: nothing to build', { file: source.questionsFile });
  const unparsable = queries.filter((q) => selected.includes(q.kg) && !parseQuery(q.text, options.defaultPrefix).ok);
  if (unparsable.length === queries.filter((q) => selected.includes(q.kg)).length) {
    throw new InputError(
      `none of the ${unparsable.length} gold queries parses: nothing to federate (first: ${unparsable[0].id}: ${(parseQuery(unparsable[0].text, options.defaultPrefix) as { error: string }).error})`,
      { file: source.questionsFile },
    );
  }

  const staged = new StagedOutput(options.out);
  try {
    const questionsSha = sha256OfFile(source.questionsFile);
    const graphs: GraphBuild[] = [];
    for (const [i, kg] of selected.entries()) {
      const g = source.graphs.get(kg)!;
      log(`[${i + 1}/${selected.length}] ${kg}: ${path.relative(source.dir, g.dataFile)}`);
      const build = await buildGraph(
        g,
        queries.filter((q) => q.kg === kg),
        { ...options, sourceDir: source.dir, questionsFile: source.questionsFile, questionsSha },
        path.join(staged.dir, kg),
        log,
      );
      for (const w of build.manifest.warnings) warnings.push(`${kg}: ${w}`);
      graphs.push(build);
      const m = build.manifest;
      log(
        `[${i + 1}/${selected.length}] ${kg}: ${counted(m.inputs.data.triples, 'triple')}, ${counted(m.queries.length, 'query', 'queries')} → ` +
          `${m.rules.length} rules, ${counted(m.shards.length, 'shard')}; ${m.guarantees.federation.federated}/${m.guarantees.federation.covered} federated (${build.timings.total} ms)`,
      );
    }
    writeBenchmark(staged.dir, questions, queries, graphs, options.defaultPrefix, source.questionsFile, questionsSha);
    const describe = { void: options.void !== false, endpointBase: options.endpointBase ?? null };
    if (describe.void) {
      for (const [rel, text] of catalogueFileTexts(graphs.flatMap((g) => g.descriptions))) fs.writeFileSync(path.join(staged.dir, rel), text);
    }
    const inputsDigest = crypto
      .createHash('sha256')
      .update(JSON.stringify([codeDigest(), questionsSha, graphs.map((g) => [g.manifest.inputs, g.manifest.options]), describe]))
      .digest('hex');
    const outputDigest = digestTree(staged.dir);
    writeJson(path.join(staged.dir, 'build.json'), {
      tool: { ...TOOL, solver: SOLVER },
      graphs: graphs.map((g) => g.manifest.graph),
      // The method options as resolved (defaults, preset, explicit options), so the build can be repeated.
      preset: options.preset ?? null,
      options: { ...methodOptionsOf(options), seed: options.seed, defaultPrefix: options.defaultPrefix, solverTimeoutMs: options.solverTimeoutMs },
      inputsDigest,
      outputDigest,
    });
    const previous = readPrevious(options.out, inputsDigest, staged.dir, outputDigest);
    staged.commit(isBuildEntry);
    // A serve loads a build's shards at its start: one running on this output directory keeps
    // answering from the build it loaded, which partition just replaced.
    const server = lockHolderOf(path.join(stateDir(options.out), STATE_FILES.serveLock));
    if (server?.alive && !server.self && !previous?.identical) {
      warnings.push(`fkgqa serve (${server.name}) is serving the build this one replaced in ${options.out}: it answers from the shards it loaded at its start until it is restarted`);
    }
    const method = { preset: options.preset ?? null, options: methodOptionsOf(options) };
    return { out: options.out, graphs, questions, queries, warnings, outputDigest, method, previous, timings: { totalMs: ms(t0) } };
  } catch (e) {
    staged.discard();
    throw e;
  }
}
