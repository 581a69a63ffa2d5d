/**
 * `--federation-engine jena`: Apache Jena ARQ 4.5.0 from Debian's `libapache-jena-java`, run as one
 * long-lived JVM (federation/jena/JenaFederationEngine.java, compiled once with javac or run as a
 * single-file source program) spoken to in JSON lines over its stdin/stdout (protocol in the Java
 * file's comment); docs/federation.md ("`jena`: Apache Jena ARQ 4.5.0") has its two ARQ settings.
 *
 * Jena's HTTP goes through the Java program's own guarded client, which enforces the registry's
 * rules as `fetchVia` does (src/common/http-client.ts): a URL outside the registry is refused
 * before sending, no redirect is followed (a 3xx fails the query, naming both URLs), each request
 * is reported before it is sent. The JVM evaluates queries on its own threads; this wrapper admits
 * at most `parallel` at a time, sends `cancel` at the time limit or on abort and answers at once
 * (the JVM aborts the query, cancels its HTTP requests and closes their streams), and counts the
 * reported requests. When Node exits the JVM's stdin closes and it exits.
 *
 * Jena has no source selection: a query with `sources` (verify's federated form) is answered with
 * an error outcome saying so (`selectsSources` false).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { DEFAULT_MAX_DECODED_BYTES, type EndpointFault, type EngineOutcome, type EngineQueryOptions, type EngineSetup, type FederationEngine } from '../engine.js';
import { dueGraceMs, DueAnswers, lateStart, outcomeAtLimit, runLimit, waitLimit, waitOutcome, type StopReason } from '../limit.js';
import { errorBody } from '../../common/http-client.js';
import { checkServiceQuery } from '../service-check.js';
import { silentTargets } from '../../sparql/services.js';

/** The Java program (federation/jena/JenaFederationEngine.java at the repository root). */
const JENA_PROGRAM = fileURLToPath(new URL('../../../federation/jena/JenaFederationEngine.java', import.meta.url));

/**
 * Jars of Jena ARQ 4.5.0 and the dependencies it loads, as Debian installs them in /usr/share/java
 * (packages libapache-jena-java and its Depends: libcommons-*-java, libdexx-java, libguava-java,
 * libslf4j-java, libgoogle-gson-java, libjackson2-*-java, libjsonld-java, libtitanium-json-ld-java,
 * libjsonp2-java, libhttpclient-java, libprotobuf-java, libthrift-java).
 */
const DEBIAN_JENA_JARS = [
  'jena-arq',
  'jena-base',
  'jena-core',
  'jena-iri',
  'commons-lang3',
  'commons-io',
  'commons-codec',
  'commons-compress',
  'commons-csv',
  'commons-cli',
  'dexx.collection',
  'guava',
  'slf4j-api',
  'slf4j-simple',
  'gson',
  'jackson-core',
  'jackson-databind',
  'jackson-annotations',
  'jsonld-java',
  'titanium-json-ld',
  'jakarta.json-api',
  'httpclient',
  'httpcore',
  'protobuf',
  'thrift',
];

/** The Debian packages the engine needs (what `.ci/run` installs). */
const JENA_APT_PACKAGES = ['openjdk-17-jdk-headless', 'libapache-jena-java'] as const;

/** Where Jena and Java were found (`javac` when the JDK has one), or why the engine cannot run here. */
type JenaSetup = { ok: true; java: string; javac?: string; classpath: string[] } | { ok: false; reason: string };

/**
 * Finds the JVM and Jena's jars. `FKGQA_JENA_CLASSPATH` (colon-separated) replaces the Debian jar
 * list; `JAVA_HOME` selects the JVM (else `java` on PATH).
 * @param jarDir where Debian installs jars (default /usr/share/java)
 * @returns `{ok:false, reason}` naming what is missing and the apt-get command that installs it
 */
export function findJena(jarDir = '/usr/share/java'): JenaSetup {
  const install = `apt-get install -y --no-install-recommends ${JENA_APT_PACKAGES.join(' ')}`;
  const fromEnv = process.env.FKGQA_JENA_CLASSPATH?.split(':').filter(Boolean);
  const classpath = fromEnv ?? DEBIAN_JENA_JARS.map((j) => path.join(jarDir, `${j}.jar`));
  const missing = classpath.filter((f) => !fs.existsSync(f));
  if (missing.length > 0) return { ok: false, reason: `Jena is not installed: ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''} missing (${install})` };
  const home = process.env.JAVA_HOME;
  const java = home ? path.join(home, 'bin', 'java') : findOnPath('java');
  if (!java || !fs.existsSync(java)) return { ok: false, reason: `no java found (${home ? `JAVA_HOME=${home}` : 'PATH'}; ${install})` };
  // The single-file source launcher needs the jdk.compiler module, i.e. a JDK, not a JRE.
  const jvmDir = path.dirname(path.dirname(fs.realpathSync(java)));
  const modules = path.join(jvmDir, 'lib', 'modules');
  if (fs.existsSync(path.join(jvmDir, 'release'))) {
    const release = fs.readFileSync(path.join(jvmDir, 'release'), 'utf8');
    const m = /^MODULES="([^"]*)"/m.exec(release);
    if (m && !m[1].split(/\s+/).includes('jdk.compiler')) return { ok: false, reason: `${java} is a JRE without jdk.compiler, which running a .java source needs (${install})` };
  } else if (!fs.existsSync(modules)) {
    return { ok: false, reason: `cannot tell whether ${java} is a JDK` };
  }
  const javac = path.join(path.dirname(fs.realpathSync(java)), 'javac');
  return { ok: true, java, ...(fs.existsSync(javac) ? { javac } : {}), classpath };
}

/**
 * The compiled program: `<cacheDir>/classes-<sha256 of the source and the javac path>/`, compiled
 * with javac on first use (about 4 s, once per machine and source version; concurrent starts
 * each compile into a temporary folder and the first rename wins). Starting from the class instead
 * of the source saves about 3 s and 120 MiB per start (javac does not run inside the engine's
 * JVM). Undefined when there is no javac: the JVM then runs the source file itself.
 */
function compiledProgram(setup: JenaSetup & { ok: true }, cacheDir: string): string | undefined {
  if (!setup.javac) return undefined;
  const source = fs.readFileSync(JENA_PROGRAM);
  const key = crypto.createHash('sha256').update(source).update(setup.javac).update(setup.classpath.join(':')).digest('hex').slice(0, 16);
  const dir = path.join(cacheDir, `classes-${key}`);
  if (fs.existsSync(path.join(dir, 'JenaFederationEngine.class'))) return dir;
  const tmp = fs.mkdtempSync(path.join(cacheDir, '.classes-'));
  try {
    execFileSync(setup.javac, ['-nowarn', '-encoding', 'UTF-8', '-cp', setup.classpath.join(':'), '-d', tmp, JENA_PROGRAM], { stdio: ['ignore', 'ignore', 'pipe'] });
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (fs.existsSync(path.join(dir, 'JenaFederationEngine.class'))) return dir; // another process won
    const err = (e as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`javac failed on ${JENA_PROGRAM}${err ? `: ${err.split('\n').slice(0, 3).join(' ')}` : ''}`, { cause: e });
  }
  return dir;
}

function findOnPath(cmd: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const p = path.join(dir, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

type Reply =
  | { type: 'ready'; jena: string; java: string }
  | { type: 'request'; id: number; endpoint: string }
  | { type: 'answered'; id: number; fault?: EndpointFault }
  | { type: 'result'; id: number; body: string; contentType: string }
  | { type: 'error'; id: number; error: string; httpStatus?: number; fault?: EndpointFault; errorBody?: string; errorEndpoint?: string }
  | { type: 'cancelled'; id: number }
  | { type: 'fatal'; error: string };

interface Pending {
  requests: Record<string, number>;
  resolve: (o: EngineOutcome) => void;
  /** Requests awaiting answers, and a 503 that stopped the query at its endpoint's limit: read at the engine's limit. */
  due: DueAnswers;
}

/** Options of JenaEngine.create. */
interface JenaEngineOptions extends EngineSetup {
  /**
   * A writable cache directory: the compiled program (compiledProgram) and, on the JVM's class
   * path, the Xerces message bundles Debian's jena-core.jar misplaces (see the Java program);
   * default `<tmpdir>/fkgqa-jena-<uid>`.
   */
  cacheDir?: string;
  /** A found setup (default findJena()). */
  setup?: JenaSetup;
}

/** Jena ARQ as a federation engine (module comment). */
export class JenaEngine implements FederationEngine {
  readonly name = 'jena';
  readonly selectsSources = false;
  private child?: ChildProcess;
  private starting?: Promise<void>;
  private readonly pending = new Map<number, Pending>();
  private readonly waiting: (() => void)[] = [];
  private running = 0;
  private nextId = 1;
  private closed = false;
  private stderrTail: string[] = [];
  /** JVM restarts after it died. */
  restarts = 0;
  /** Process id of the JVM (undefined while it is not running). */
  get pid(): number | undefined {
    return this.child?.pid;
  }
  /** Versions reported by the JVM at start. */
  versions?: { jena: string; java: string };

  private constructor(private readonly o: JenaEngineOptions & { setup: JenaSetup & { ok: true } }) {}

  /**
   * Finds Java and Jena; the JVM starts at the first query or at `warm`.
   * @throws Error when Java or Jena is missing (the message of findJena, with the apt-get line)
   */
  static create(o: JenaEngineOptions): JenaEngine {
    const setup = o.setup ?? findJena();
    if (!setup.ok) throw new Error(setup.reason);
    return new JenaEngine({ ...o, setup });
  }

  /**
   * Starts the JVM now and waits until Jena is initialised (1–4 s: compiling the program on first
   * use, loading Jena) instead of at the first query.
   * @throws Error when the JVM fails to start (its last stderr lines)
   */
  async warm(): Promise<void> {
    if (this.closed) return;
    await this.start();
  }

  private everStarted = false;

  private start(): Promise<void> {
    if (this.starting) return this.starting;
    this.everStarted = true;
    const dir = this.o.cacheDir ?? path.join(os.tmpdir(), `fkgqa-jena-${process.getuid?.() ?? 'user'}`);
    const resources = path.join(dir, 'resources');
    fs.mkdirSync(resources, { recursive: true });
    let classes: string | undefined;
    try {
      classes = compiledProgram(this.o.setup, dir);
    } catch (e) {
      return Promise.reject(e as Error);
    }
    const args = [
      '-Xmx1024m',
      '-XX:+UseSerialGC',
      '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn',
      '-Dorg.slf4j.simpleLogger.logFile=System.err',
      '-cp',
      [...this.o.setup.classpath, ...(classes ? [classes] : []), resources].join(':'),
      classes ? 'JenaFederationEngine' : JENA_PROGRAM,
      resources,
    ];
    const child = spawn(this.o.setup.java, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.stderrTail = [];
    this.starting = new Promise<void>((resolve, reject) => {
      const lines = readline.createInterface({ input: child.stdout! });
      let ready = false;
      lines.on('line', (line) => {
        let m: Reply;
        try {
          m = JSON.parse(line) as Reply;
        } catch {
          this.stderrTail.push(`stdout: ${line}`);
          return;
        }
        if (m.type === 'ready') {
          ready = true;
          this.versions = { jena: m.jena, java: m.java };
          resolve();
        } else this.onReply(m);
      });
      readline.createInterface({ input: child.stderr! }).on('line', (l) => {
        this.stderrTail.push(l);
        if (this.stderrTail.length > 20) this.stderrTail.shift();
      });
      child.on('error', (e) => reject(new Error(`cannot start ${this.o.setup.java}: ${e.message}`)));
      child.on('exit', (code, signal) => {
        const why = `the Jena engine exited (${signal ?? `code ${code}`})${this.stderrTail.length ? `: ${this.stderrTail.slice(-3).join(' | ')}` : ''}`;
        if (!ready) reject(new Error(why));
        if (this.child === child) {
          this.child = undefined;
          this.starting = undefined;
        }
        for (const [id, p] of this.pending) {
          this.pending.delete(id);
          p.resolve({ status: 'error', error: this.closed ? 'the federation engine is closed' : why, requests: p.requests });
        }
      });
      child.stdin!.on('error', () => {}); // EPIPE after the JVM died: reported by 'exit'
      child.stdin!.write(`${JSON.stringify({ op: 'init', endpoints: this.o.endpoints, maxDecodedBytes: this.o.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES })}\n`);
    });
    this.busy(true);
    this.starting.then(
      () => this.busy(this.pending.size > 0),
      () => {},
    );
    return this.starting;
  }

  /**
   * Keeps Node's event loop alive while the JVM starts or a query is pending, and lets Node exit
   * when the engine is idle (the JVM then reads end of input and exits).
   */
  private busy(on: boolean): void {
    const c = this.child;
    if (!c) return;
    const handles = [c, c.stdout, c.stderr, c.stdin] as unknown as { ref?: () => void; unref?: () => void }[];
    for (const h of handles) (on ? h?.ref : h?.unref)?.call(h);
  }

  private onReply(m: Reply): void {
    if (m.type === 'fatal') {
      this.stderrTail.push(`fatal: ${m.error}`);
      return;
    }
    if (m.type === 'cancelled' || m.type === 'ready') return;
    const p = this.pending.get(m.id);
    if (!p) return;
    if (m.type === 'request') {
      p.requests[m.endpoint] = (p.requests[m.endpoint] ?? 0) + 1;
      p.due.sent();
    } else if (m.type === 'answered') p.due.answered(m.fault);
    else if (m.type === 'result') {
      this.pending.delete(m.id);
      p.due.end();
      p.resolve({ status: 'ok', body: m.body, contentType: m.contentType, requests: p.requests });
    } else if (m.type === 'error') {
      this.pending.delete(m.id);
      p.due.end(m.fault);
      // Jena's message of an HTTP error is the status text alone ("Service Unavailable"): the endpoint that answered it
      // and its own words follow (their first line).
      const said = m.errorBody && m.httpStatus ? errorBody(m.errorBody, '', m.httpStatus) : '';
      const from = m.errorEndpoint && !m.error.includes(m.errorEndpoint) ? `${m.error} (from ${m.errorEndpoint})` : m.error;
      p.resolve({
        status: 'error',
        error: said && !m.error.includes(said) ? `${from}: ${said}` : from,
        ...(m.httpStatus ? { httpStatus: m.httpStatus } : {}),
        ...(m.fault ? { fault: m.fault } : {}),
        requests: p.requests,
      });
    }
  }

  /** Evaluates one query (FederationEngine.query); never rejects. */
  async query(given: string, mediaType: string, options: EngineQueryOptions): Promise<EngineOutcome> {
    const requests: Record<string, number> = {};
    if (this.closed) return { status: 'error', error: 'the federation engine is closed', requests };
    if (options.sources?.length) {
      return { status: 'error', error: 'jena has no source selection: it evaluates SERVICE clauses only (name each endpoint in SERVICE <url> { … })', httpStatus: 400, requests };
    }
    const checked = checkServiceQuery(given, this.o.endpoints);
    if (!checked.ok) return { status: 'error', error: checked.error, httpStatus: 400, requests };
    const query = checked.query;
    // The limit counts from the call, or (a deadline `from: 'start'`) from when the started JVM takes the query.
    const wait = waitLimit(options);
    let limit = wait;
    try {
      // A slot among `parallel`.
      let stop: StopReason | undefined;
      void wait.stopped.then((w) => {
        stop = w;
        this.waiting.splice(0).forEach((f) => f());
      });
      while (this.running >= Math.max(1, this.o.parallel ?? 1) && !stop && !this.closed) await new Promise<void>((r) => this.waiting.push(r));
      if (this.closed) return { status: 'error', error: 'the federation engine is closed', requests };
      if (stop) return waitOutcome(options, 'jena', wait, stop, requests);
      // The wait's limit passed by the clock, its timer not yet fired (a loaded event loop): the query is not started.
      if (wait.passed()) return waitOutcome(options, 'jena', wait, 'timeout', requests);
      // Too little of its client's limit left to finish (startFloor of limit.ts): busy now, the slot left to the next query.
      const late = lateStart(options, 'jena', wait, requests);
      if (late) return late;
      this.running++;
      try {
        if (!this.child) {
          if (this.everStarted) this.restarts++;
          const started = this.start();
          const first = await Promise.race([
            started.then(
              () => undefined,
              (e: Error) => e,
            ),
            wait.stopped,
          ]);
          if (first === 'timeout' || first === 'aborted') return waitOutcome(options, 'jena', wait, first, requests);
          if (first instanceof Error) return { status: 'error', error: `the federation engine jena failed to start: ${first.message}`, requests };
        }
        limit = runLimit(options, wait);
        const id = this.nextId++;
        const due = new DueAnswers(silentTargets(query));
        const result = new Promise<EngineOutcome>((resolve) => this.pending.set(id, { requests, resolve, due }));
        this.busy(true);
        const grace = dueGraceMs(options.deadline);
        this.child!.stdin!.write(`${JSON.stringify({ op: 'query', id, query, mediaType, timeoutMs: limit.left(), graceMs: grace })}\n`);
        const first = await Promise.race([result, limit.stopped]);
        if (first === 'timeout' || first === 'aborted') {
          // An endpoint's 503 at the limit it was sent (busy, or that limit) may still be on its way: it is the verdict.
          const o = first === 'timeout' ? await outcomeAtLimit(due, limit, grace, options.signal, requests) : limit.outcome(first, requests);
          this.pending.delete(id);
          this.child?.stdin!.write(`${JSON.stringify({ op: 'cancel', id })}\n`);
          return o;
        }
        // The JVM's reply read once the limit had passed, before its due timer fired (a loaded event loop reads the pipe
        // first): a report, as after the timer. The JVM counts the limit from when it read the query, later, so what its
        // own limit caused (no request sent past it, an error the SERVICE clause then raised) always comes after this one.
        if (limit.passed() && !options.signal?.aborted) return await outcomeAtLimit(due, limit, grace, options.signal, requests);
        return first;
      } finally {
        this.running--;
        if (this.pending.size === 0) this.busy(false);
        this.waiting.shift()?.();
      }
    } finally {
      limit.dispose();
      wait.dispose();
    }
  }

  /** Ends the JVM (closes its stdin; kills it if it has not exited within 5 s). */
  async close(): Promise<void> {
    this.closed = true;
    this.waiting.splice(0).forEach((f) => f());
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdin!.end();
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  }
}
