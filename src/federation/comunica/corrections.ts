/**
 * Corrections of four actors of Comunica 4.5.0, applied by each Comunica thread (thread.ts) to its
 * engine before the first query: `prune-empty-source-operations` and `group-sources` (source
 * selection; they act only on queries over `sources`, verify's federated form), `orderby` (one
 * stable sort by all keys) and `optional-nested-loop` (a left join with a condition, which only the
 * removed bind join took). Besides, `correctDataFactory` keeps the language tags of endpoints'
 * answers and `correctServiceFailures` reads every SERVICE answer whole (their doc comments).
 * docs/federation.md ("Comunica 4.5.0, corrected") has each defect, its reproduction and the
 * correction. Each correction replaces one function of an actor the compiled engine built (found
 * by its Components.js name); an engine without one of them fails to start, naming it.
 */
import { type Algebra, Factory } from 'sparqlalgebrajs';
import type { Iterators } from './engine-module.js';

/** The Components.js name of the actor that prunes sources whose triple patterns match nothing. */
const PRUNE_EMPTY_ACTOR = 'urn:comunica:default:optimize-query-operation/actors#prune-empty-source-operations';
/** The Components.js name of the actor that sends operations whose inputs share a source to that source whole. */
const GROUP_SOURCES_ACTOR = 'urn:comunica:default:optimize-query-operation/actors#group-sources';
/** The Components.js name of the actor that evaluates ORDER BY. */
const ORDER_BY_ACTOR = 'urn:comunica:default:query-operation/actors#orderby';
/** The Components.js name of the nested-loop OPTIONAL join, which also takes OPTIONALs with a condition once corrected. */
const OPTIONAL_NESTED_LOOP_ACTOR = 'urn:comunica:default:rdf-join/actors#optional-nested-loop';

/** The Components.js name of the actor that evaluates a SERVICE clause. */
const SERVICE_ACTOR = 'urn:comunica:default:query-operation/actors#service';

/** A node of SPARQL algebra (sparqlalgebrajs 5.0.2) as the optimisers see it: its source, if assigned, in `metadata.scopedSource`. */
type Node = Algebra.Operation & { metadata?: { scopedSource?: unknown } };

/**
 * Whether an operation's answer is empty whatever its other parts evaluate to: an empty UNION
 * (every source of a triple pattern pruned) reached only through operators that keep no solution
 * without one from it — a join, the left side of OPTIONAL or MINUS, the input of a projection,
 * filter, BIND, DISTINCT, ORDER BY or slice. Never through an aggregate (one row over no solution),
 * the right side of OPTIONAL or MINUS, an expression (EXISTS), VALUES or SERVICE.
 * @param op SPARQL algebra (sparqlalgebrajs)
 * @returns true only when the operation certainly has no solution
 */
function certainlyEmpty(op: Algebra.Operation): boolean {
  switch (op.type) {
    case 'union':
      return op.input.every(certainlyEmpty);
    case 'alt':
      return op.input.length === 0;
    case 'join':
      return op.input.some(certainlyEmpty);
    case 'leftjoin':
    case 'minus':
      return certainlyEmpty(op.input[0]);
    case 'project':
    case 'distinct':
    case 'reduced':
    case 'orderby':
    case 'extend':
    case 'filter':
    case 'slice':
    case 'graph':
    case 'from':
      return certainlyEmpty(op.input);
    default:
      return false;
  }
}

/** Operations that read data: without a source of their own (`scopedSource`), Comunica evaluates them itself. */
const READS = new Set(['pattern', 'path', 'link', 'nps', 'service']);

/**
 * Whether every part of an operation that reads data is evaluated at `source`: each node with a
 * source has that one; a SERVICE, a triple pattern without a source, or a pruned (empty) UNION is
 * not at `source`. EXISTS inside its expressions count too.
 */
function wholeAt(op: Node, source: unknown): boolean {
  if (op.metadata?.scopedSource !== undefined) return op.metadata.scopedSource === source;
  if (op.type === 'union' && op.input.length === 0) return false;
  if (READS.has(op.type) || (op.type === 'bgp' && op.patterns.length > 0)) return false;
  const inputs = 'input' in op ? (Array.isArray(op.input) ? op.input : [op.input]) : [];
  return inputs.every((i) => wholeAt(i as Node, source)) && existsPatterns(op).every((p) => wholeAt(p as Node, source));
}

/** The patterns of the EXISTS and NOT EXISTS in an operation's own expressions (FILTER, BIND, OPTIONAL's, ORDER BY's, aggregates), not in its inputs. */
function existsPatterns(op: Algebra.Operation): Algebra.Operation[] {
  const out: Algebra.Operation[] = [];
  const walk = (e: unknown): void => {
    if (e === null || typeof e !== 'object') return;
    if (Array.isArray(e)) return e.forEach(walk);
    const x = e as { type?: string; expressionType?: string; input?: Algebra.Operation; args?: unknown; expression?: unknown };
    if (x.type !== 'expression') return;
    if (x.expressionType === 'existence' && x.input) out.push(x.input);
    walk(x.args);
    walk(x.expression);
  };
  for (const [k, v] of Object.entries(op)) if (k !== 'input' && k !== 'metadata') walk(v);
  return out;
}

/** A solution of Comunica (@comunica/utils-bindings-factory `Bindings`): `merge` is undefined for incompatible solutions. */
interface Bindings {
  merge(other: Bindings): Bindings | undefined;
}

/** The stream of solutions of a Comunica answer (an asynciterator `AsyncIterator`), as the corrections read it. */
interface BindingsStream {
  toArray(): Promise<Bindings[]>;
  transform(options: { transform: (item: Bindings, done: () => void, push: (b: Bindings) => void) => void; autoStart?: boolean }): BindingsStream;
  destroy(cause?: Error): void;
}

/** An operand of a Comunica join (@comunica/bus-rdf-join `IJoinEntry`). */
interface JoinEntry {
  output: { bindingsStream: BindingsStream; metadata(): Promise<unknown> };
  operation: Algebra.Operation;
  operationRequired?: boolean;
}

/** An expression evaluator of Comunica (@comunica/actor-expression-evaluator-factory-default). */
interface Evaluator {
  evaluate(bindings: unknown): Promise<unknown>;
  evaluateAsEBV(bindings: unknown): Promise<boolean>;
}

/** A Comunica actor as the corrections see it. */
interface Actor {
  name: string;
  constructor: { hasEmptyOperation?: (op: Algebra.Operation) => boolean };
  moveSourceAnnotationUpwardsIfPossible?: (operation: Node, inputs: Node[], source: unknown, context: unknown) => Promise<Node>;
  // The ORDER BY actor (@comunica/actor-query-operation-orderby 4.5.0).
  runOperation?: (operation: Algebra.OrderBy, context: unknown) => Promise<unknown>;
  mediatorQueryOperation?: { mediate(action: { operation: Algebra.Operation; context: unknown }): Promise<{ type: string; bindingsStream: BindingsStream; metadata: unknown }> };
  mediatorTermComparatorFactory?: { mediate(action: { context: unknown }): Promise<{ orderTypes(a: unknown, b: unknown): number }> };
  mediatorExpressionEvaluatorFactory?: { mediate(action: { algExpr: Algebra.Expression; context: unknown }): Promise<Evaluator> };
  isAscending?: (expr: Algebra.Expression) => boolean;
  extractSortExpression?: (expr: Algebra.Expression) => Algebra.Expression;
  // The nested-loop OPTIONAL join (@comunica/actor-rdf-join-optional-nestedloop 4.5.0, an ActorRdfJoin).
  canHandleOperationRequired?: boolean;
  getOutput?: (action: { entries: JoinEntry[]; context: unknown }) => Promise<{ result: unknown }>;
  constructResultMetadata?: (entries: JoinEntry[], metadatas: unknown[], context: unknown, partial: object, optional: boolean) => Promise<unknown>;
}

/**
 * Whether an error is one of Comunica's expression errors (a type error, an unbound variable…),
 * which make an ORDER BY key unbound; other errors fail the query. By class name: this module does
 * not load Comunica's copy of @comunica/utils-expression-evaluator (the bundle has its own).
 */
function isExpressionError(e: unknown): boolean {
  for (let p = e === null || typeof e !== 'object' ? null : Object.getPrototypeOf(e); p && p !== Error.prototype; p = Object.getPrototypeOf(p)) {
    if ((p as { constructor?: { name?: string } }).constructor?.name === 'ExpressionError') return true;
  }
  return false;
}

/**
 * ORDER BY's evaluation (correction 3): the solutions of the input, sorted once by all keys with a
 * stable sort (`Array.prototype.sort`), each key evaluated by Comunica's expression evaluator and
 * compared in Comunica's term order (`orderTypes`: SPARQL 1.1 section 15.1); a key whose
 * evaluation is an expression error is unbound, as in Comunica.
 */
function orderByAll(
  actor: Required<Pick<Actor, 'mediatorQueryOperation' | 'mediatorTermComparatorFactory' | 'mediatorExpressionEvaluatorFactory' | 'isAscending' | 'extractSortExpression'>>,
  { ArrayIterator }: Iterators,
) {
  return async (operation: Algebra.OrderBy, context: unknown) => {
    const output = await actor.mediatorQueryOperation.mediate({ operation: operation.input, context });
    if (output.type !== 'bindings') throw new Error(`ORDER BY needs solutions, got a ${output.type} answer`);
    const order = await actor.mediatorTermComparatorFactory.mediate({ context });
    const keys = await Promise.all(
      operation.expressions.map(async (e) => ({
        ascending: actor.isAscending(e),
        evaluator: await actor.mediatorExpressionEvaluatorFactory.mediate({ algExpr: actor.extractSortExpression(e), context }),
      })),
    );
    const rows = await Promise.all(
      (await output.bindingsStream.toArray()).map(async (bindings) => ({
        bindings,
        values: await Promise.all(
          keys.map((k) =>
            k.evaluator.evaluate(bindings).catch((e: unknown) => {
              if (isExpressionError(e)) return undefined;
              throw e;
            }),
          ),
        ),
      })),
    );
    rows.sort((a, b) => {
      for (let i = 0; i < keys.length; i++) {
        const c = order.orderTypes(a.values[i], b.values[i]);
        if (c !== 0) return keys[i].ascending ? c : -c;
      }
      return 0;
    });
    return {
      type: 'bindings',
      bindingsStream: new ArrayIterator(
        rows.map((r) => r.bindings),
        { autoStart: false },
      ) as unknown as BindingsStream,
      metadata: output.metadata,
    };
  };
}

/**
 * The left join of an OPTIONAL with a condition (correction 4): the right side's solutions read
 * once, each left solution merged with every compatible one for which the condition's effective
 * boolean value is true (an expression error is false), or passed alone when none is. The join's
 * metadata is the nested-loop actor's own for an OPTIONAL.
 * @param entries the left join's operands as Comunica's LeftJoin actor gives them: the right one's
 *   operation is `FILTER(condition)` over the right side, its output the right side's solutions
 */
function leftJoinWithCondition(actor: Actor, evaluators: NonNullable<Actor['mediatorExpressionEvaluatorFactory']>) {
  return async (action: { entries: JoinEntry[]; context: unknown }) => {
    const [left, right] = action.entries;
    const condition = (right.operation as Algebra.Filter).expression;
    const evaluator = await evaluators.mediate({ algExpr: condition, context: action.context });
    const rights = await right.output.bindingsStream.toArray();
    const bindingsStream: BindingsStream = left.output.bindingsStream.transform({
      autoStart: false,
      transform: (l, done, push) => {
        void (async () => {
          let matched = false;
          for (const r of rights) {
            const both = l.merge(r);
            if (!both) continue;
            const keep = await evaluator.evaluateAsEBV(both).catch((e: unknown) => {
              if (isExpressionError(e)) return false;
              throw e;
            });
            if (keep) {
              matched = true;
              push(both);
            }
          }
          if (!matched) push(l);
        })().then(done, (e: unknown) => bindingsStream.destroy(e as Error));
      },
    });
    const metadatas = await Promise.all(action.entries.map((e) => e.output.metadata()));
    return {
      result: {
        type: 'bindings',
        bindingsStream,
        metadata: async () => await actor.constructResultMetadata!(action.entries, metadatas, action.context, {}, true),
      },
    };
  };
}

/**
 * The actors of an engine with the given Components.js names, found by walking the object graph
 * from the engine's init actor (buses, mediators, actors).
 */
function findActors(root: unknown, names: readonly string[]): Map<string, Actor> {
  const found = new Map<string, Actor>();
  const seen = new Set<unknown>();
  const queue: unknown[] = [root];
  while (queue.length > 0 && found.size < names.length) {
    const o = queue.shift();
    if (o === null || typeof o !== 'object' || seen.has(o)) continue;
    seen.add(o);
    const name = (o as { name?: unknown }).name;
    if (typeof name === 'string' && names.includes(name) && !found.has(name)) found.set(name, o as Actor);
    for (const v of Array.isArray(o) ? o : Object.values(o)) if (v !== null && typeof v === 'object' && !seen.has(v)) queue.push(v);
  }
  return found;
}

/**
 * Applies the four corrections (module comment) to the actors of one engine.
 * @param engineActor what the compiled engine's `engine()` returned (its init actor)
 * @param iterators the asynciterator module of that engine (`EngineModule.asynciterator`): the sorted solutions are its iterator
 * @returns the names of the corrected actors
 * @throws Error naming an actor that is missing or not of the shape corrected
 */
export function correctSourceSelection(engineActor: unknown, iterators: Iterators): string[] {
  const actors = findActors(engineActor, [PRUNE_EMPTY_ACTOR, GROUP_SOURCES_ACTOR, ORDER_BY_ACTOR, OPTIONAL_NESTED_LOOP_ACTOR]);
  const prune = actors.get(PRUNE_EMPTY_ACTOR);
  const group = actors.get(GROUP_SOURCES_ACTOR);
  const orderBy = actors.get(ORDER_BY_ACTOR);
  const optional = actors.get(OPTIONAL_NESTED_LOOP_ACTOR);
  const missing = (name: string) => new Error(`Comunica's actor ${name} is missing or changed, so its correction (src/federation/comunica/corrections.ts) cannot be applied; see docs/federation.md`);
  if (typeof prune?.constructor.hasEmptyOperation !== 'function') throw missing(PRUNE_EMPTY_ACTOR);
  if (typeof group?.moveSourceAnnotationUpwardsIfPossible !== 'function') throw missing(GROUP_SOURCES_ACTOR);
  const { mediatorQueryOperation, mediatorTermComparatorFactory, mediatorExpressionEvaluatorFactory, isAscending, extractSortExpression } = orderBy ?? {};
  if (typeof orderBy?.runOperation !== 'function' || !mediatorQueryOperation || !mediatorTermComparatorFactory || !mediatorExpressionEvaluatorFactory || !isAscending || !extractSortExpression)
    throw missing(ORDER_BY_ACTOR);
  if (typeof optional?.getOutput !== 'function' || typeof optional.constructResultMetadata !== 'function' || optional.canHandleOperationRequired !== false) throw missing(OPTIONAL_NESTED_LOOP_ACTOR);
  // A static method, called by the class's name inside `run`: replaced on the class (this thread's copy of the module).
  prune.constructor.hasEmptyOperation = certainlyEmpty;
  const move = group.moveSourceAnnotationUpwardsIfPossible.bind(group);
  group.moveSourceAnnotationUpwardsIfPossible = async (operation, inputs, source, context) =>
    existsPatterns(operation).every((p) => wholeAt(p as Node, source)) ? move(operation, inputs, source, context) : operation;
  orderBy.runOperation = orderByAll(
    {
      mediatorQueryOperation,
      mediatorTermComparatorFactory,
      mediatorExpressionEvaluatorFactory,
      isAscending: isAscending.bind(orderBy),
      extractSortExpression: extractSortExpression.bind(orderBy),
    },
    iterators,
  );
  const nestedLoop = optional.getOutput.bind(optional);
  const withCondition = leftJoinWithCondition(optional, mediatorExpressionEvaluatorFactory);
  optional.canHandleOperationRequired = true;
  optional.getOutput = (action) => (action.entries[1]?.operationRequired ? withCondition(action) : nestedLoop(action));
  return [PRUNE_EMPTY_ACTOR, GROUP_SOURCES_ACTOR, ORDER_BY_ACTOR, OPTIONAL_NESTED_LOOP_ACTOR];
}

/** The RDF/JS data factory of Comunica 4.5.0 (rdf-data-factory 1.1), as its correction sees it. */
interface LiteralFactory {
  literal(value: string, languageOrDatatype?: unknown): unknown;
}

/**
 * Corrects the data factory that Comunica 4.5.0 makes for each query (rdf-data-factory 1.1, the
 * default of `KeysInitQuery.dataFactory`): its SPARQL JSON and XML result parsers (sparqljson-parse
 * 3.3, sparqlxml-parse 3.x) hand a language-tagged literal of an endpoint's answer over as
 * `literal(value, { language, direction })` (RDF/JS 2.0), which rdf-data-factory 1.1 reads as a
 * datatype: the tag was lost (a SERVICE answer's `"Altair"@en` became `"Altair"`, LANG gave "").
 * Corrected: `literal` of every data factory class reachable from the engine reads that object as
 * its language (a base direction, RDF 1.2, is dropped; RDF 1.1 has none).
 * @param engineActor what the compiled engine's `engine()` returned (its init actor)
 * @returns how many data factory classes were corrected (1 in Comunica 4.5.0)
 * @throws Error when the engine holds no data factory of that shape (a Comunica upgrade: docs/federation.md)
 */
export function correctDataFactory(engineActor: unknown): number {
  const prototypes = new Set<LiteralFactory>();
  const seen = new Set<unknown>();
  const queue: unknown[] = [engineActor];
  while (queue.length > 0) {
    const o = queue.shift();
    if (o === null || typeof o !== 'object' || seen.has(o)) continue;
    seen.add(o);
    const proto = Object.getPrototypeOf(o) as (LiteralFactory & { constructor?: { name?: string } }) | null;
    if (proto?.constructor?.name === 'DataFactory' && typeof proto.literal === 'function') prototypes.add(proto);
    for (const v of Array.isArray(o) ? o : Object.values(o)) if (v !== null && typeof v === 'object' && !seen.has(v)) queue.push(v);
  }
  if (prototypes.size === 0)
    throw new Error("Comunica's data factory (rdf-data-factory) is missing or changed, so its correction (src/federation/comunica/corrections.ts) cannot be applied; see docs/federation.md");
  for (const proto of prototypes) {
    const literal = proto.literal;
    if ((literal as { corrected?: true }).corrected) continue;
    const corrected = function (this: LiteralFactory, value: string, languageOrDatatype?: unknown) {
      const tagged = languageOrDatatype !== null && typeof languageOrDatatype === 'object' && !('termType' in languageOrDatatype) && 'language' in languageOrDatatype;
      return literal.call(this, value, tagged ? (languageOrDatatype as { language: string }).language : languageOrDatatype);
    };
    proto.literal = Object.assign(corrected, { corrected: true as const });
  }
  return prototypes.size;
}

/**
 * Runs the evaluation of one SERVICE clause (`evaluate`) for the engine's thread, which knows the
 * running query: `clause` says whether the clause is SILENT and names its endpoint (the SERVICE IRI).
 * It resolves or rejects as `evaluate` does; what the thread records meanwhile (the endpoint that
 * failed, the failure of a clause that is not SILENT as the query's) is its own (thread.ts).
 */
export type ServiceScope = <T>(clause: { silent: boolean; endpoint: string }, evaluate: () => Promise<T>) => Promise<T>;

/**
 * What the answer of a SERVICE clause, read whole, tells Comunica's join planner of its size:
 * - `exact`: the number of rows read (`{ type: 'exact' }`), for `comunica`, whose joins evaluate each
 *   operand once whatever the sizes;
 * - `endpoint`: what Comunica itself gives, unchanged (for a SPARQL endpoint the answer of a `SELECT
 *   (COUNT(*) AS ?count)` of the clause, an estimate, or infinite when that answer has no count), for
 *   the baseline `comunica-default`: its planner then chooses between bind joins and hash joins on the
 *   figures Comunica as shipped sees, whichever way the answer was read.
 */
export type ServiceCardinality = 'exact' | 'endpoint';

/** The answer of a Comunica query operation, as the SERVICE correction reads it. */
interface OperationOutput {
  type: string;
  bindingsStream: BindingsStream;
  metadata(): Promise<Record<string, unknown>>;
}

/** One solution without bindings, the answer of a failed SERVICE SILENT (VALUES with one empty row: Comunica's own solution and metadata). */
const ONE_EMPTY_SOLUTION = new Factory().createValues([], [{}]);

/**
 * Corrects how Comunica 4.5.0's SERVICE actor (`query-operation/actors#service`) treats a failed
 * endpoint. It catches a failure only while it sets up the clause's evaluation, never one of the
 * answer it streams (an HTTP error, a refused connection, a cut or broken answer all fail while the
 * rows are read), so SERVICE SILENT failed the query like any SERVICE; and an operator that reads a
 * few rows and stops (FILTER EXISTS, ASK, LIMIT) never saw the failure of the rest: inside FILTER
 * (NOT) EXISTS a cut answer was an answer (its first row kept, the query answered rows). Corrected,
 * as Jena's ARQ evaluates a SERVICE clause (it reads the whole answer before the clause yields a
 * row): the answer of each evaluation of a SERVICE clause is read whole before its first row goes on;
 * a failure while it is sent or read is the query's (`scope` records it, thread.ts) unless the clause
 * is SILENT, which then yields one solution without bindings (SPARQL 1.1 Federated Query, section 4:
 * "the failed SERVICE clause is treated as if it had a result of a single solution with no
 * bindings"), the rows read before the failure dropped.
 * @param engineActor what the compiled engine's `engine()` returned (its init actor)
 * @param iterators the asynciterator module of that engine (`EngineModule.asynciterator`): the rows read go on as its iterator
 * @param scope runs each evaluation of a SERVICE clause (`ServiceScope`)
 * @param cardinality what the clause's answer tells Comunica's join planner of its size (`ServiceCardinality`)
 * @returns the name of the corrected actor
 * @throws Error when the engine has no SERVICE actor of that shape (a Comunica upgrade: docs/federation.md)
 */
export function correctServiceFailures(engineActor: unknown, { ArrayIterator }: Iterators, scope: ServiceScope, cardinality: ServiceCardinality = 'exact'): string {
  const service = findActors(engineActor, [SERVICE_ACTOR]).get(SERVICE_ACTOR) as
    { runOperation?: (operation: Algebra.Service, context: unknown) => Promise<OperationOutput>; mediatorQueryOperation?: Actor['mediatorQueryOperation'] } | undefined;
  const mediator = service?.mediatorQueryOperation;
  if (typeof service?.runOperation !== 'function' || !mediator)
    throw new Error(`Comunica's actor ${SERVICE_ACTOR} is missing or changed, so its correction (src/federation/comunica/corrections.ts) cannot be applied; see docs/federation.md`);
  const run = service.runOperation.bind(service);
  service.runOperation = async (operation, context) => {
    try {
      return await scope({ silent: operation.silent, endpoint: operation.name.value }, async () => {
        // Not SILENT for Comunica's own handling: every failure comes here.
        const output = await run({ ...operation, silent: false }, context);
        if (output.type !== 'bindings') throw new Error(`a SERVICE clause answered ${output.type}, not solutions`);
        const metadata = output.metadata();
        metadata.catch(() => undefined);
        const rows = await output.bindingsStream.toArray();
        const known = await metadata;
        return {
          type: 'bindings',
          // An iterator of the engine's own asynciterator (EngineModule): one of another copy left BIND's reader waiting now and then.
          bindingsStream: new ArrayIterator(rows, { autoStart: false }) as unknown as BindingsStream,
          metadata: async () => (cardinality === 'exact' ? { ...known, cardinality: { type: 'exact', value: rows.length } } : known),
        };
      });
    } catch (e) {
      if (!operation.silent) throw e;
      return (await mediator.mediate({ operation: ONE_EMPTY_SOLUTION, context })) as unknown as OperationOutput;
    }
  };
  return SERVICE_ACTOR;
}

/** The Components.js name of the actor that makes Comunica's evaluators of extension functions. */
const EXTENSION_FUNCTIONS_ACTOR = 'urn:comunica:default:function-factory/actors#expression-function-extensions';

/**
 * Makes an extension function's error whose message holds `NO_VALUE` an expression error: Comunica 4.5.0 (`NamedExtension`)
 * wraps whatever an extension function throws into an `ExtensionFunctionError`, which fails the
 * whole query, where a built-in's error (`1 / 0`) only leaves the value unbound (SPARQL 1.1, 17.3).
 * Corrected: the evaluator the actor makes gives, for such an error, the expression error of an
 * unbound variable (Comunica's own `UnboundVariableError`, which BIND and FILTER take as an error).
 * @param engineActor what the compiled engine's `engine()` returned (its init actor)
 * @throws Error when the actor is missing or not of the shape corrected (a Comunica upgrade)
 */
export function correctExtensionErrors(engineActor: unknown): void {
  type Apply = (a: { args: unknown[]; mapping: unknown; exprEval: { evaluatorExpressionEvaluation(e: unknown, m: unknown): Promise<unknown> } }) => Promise<unknown>;
  const actor = findActors(engineActor, [EXTENSION_FUNCTIONS_ACTOR]).get(EXTENSION_FUNCTIONS_ACTOR) as unknown as { run?: (a: unknown) => Promise<{ apply: Apply }> } | undefined;
  if (typeof actor?.run !== 'function') {
    throw new Error(`Comunica's actor ${EXTENSION_FUNCTIONS_ACTOR} is missing or changed, so its correction (src/federation/comunica/corrections.ts) cannot be applied; see docs/federation.md`);
  }
  const run = actor.run.bind(actor);
  actor.run = async (action) => {
    const f = await run(action);
    const apply = f.apply;
    f.apply = async (a) => {
      try {
        return await apply(a);
      } catch (e) {
        if (!(e instanceof Error) || !e.message.includes(NO_VALUE)) throw e;
        return a.exprEval.evaluatorExpressionEvaluation({ expressionType: 'variable', name: '?fkgqa_no_value' }, a.mapping);
      }
    };
    return f;
  };
}

/** The words an extension function (thread.ts) starts the message of its error with when it has no value to give (Comunica keeps only the message of the error it wraps). */
export const NO_VALUE = 'fkgqa: no value';
