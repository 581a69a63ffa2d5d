/**
 * One Virtuoso instance (OpenLink Virtuoso Open Source 7, `virtuoso-t`) holding shards for
 * `fkgqa serve --store virtuoso`: its own folder in the serve state folder with a generated
 * `virtuoso.ini` (database files there, its own SQL and HTTP ports on one host), started with
 * `+foreground` as a child process (under `setpriv --pdeathsig KILL` where util-linux has it, so
 * that it dies with serve), its DBA password replaced by a random one, each shard loaded
 * into a named graph of its own (`DB.DBA.TTLP_MT` through `isql-vt`), stopped and its folder
 * removed on `stop`.
 *
 * An instance is always addressed by `host:port`, and its ports are chosen free and distinct across
 * every instance of the serve: Virtuoso also listens on a Unix socket named after its SQL port,
 * which instances on one filesystem would share whatever their host.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/** The server binary (`VIRTUOSO_T` names another), and its SQL client. */
export const VIRTUOSO_BIN = process.env.VIRTUOSO_T ?? 'virtuoso-t';
export const ISQL_BIN = process.env.VIRTUOSO_ISQL ?? 'isql-vt';

/**
 * ResultSetMaxRows of every instance: Virtuoso cuts a SELECT answer at this many rows with HTTP 200
 * (openlink/virtuoso-opensource#817). The store refuses an answer that reaches it.
 */
export const VIRTUOSO_MAX_ROWS = 1_000_000;

/** Options of one instance. */
export interface VirtuosoOptions {
  /** Folder of its database files and ini (created; removed on stop). */
  dir: string;
  /** Interface both its ports bind to (e.g. 127.0.0.2). */
  host: string;
  /** Its SQL (isql) port and HTTP (SPARQL) port. */
  sqlPort: number;
  httpPort: number;
  /** Folders its SQL may read files from (the build's graph folders). */
  dirsAllowed: string[];
  /** The server's own time limit of a query, in seconds (MaxQueryExecutionTime): a backstop behind the endpoint's own limit. */
  maxQuerySeconds: number;
  /** 8 KB buffers of its page cache (NumberOfBuffers; default 20,000: about 170 MB). */
  buffers?: number;
}

/** The ini of an instance (Virtuoso 7 configuration, sections Database, TempDatabase, Parameters, HTTPServer, SPARQL). */
export function virtuosoIni(o: VirtuosoOptions): string {
  const f = (name: string) => path.join(o.dir, name);
  const buffers = o.buffers ?? 20_000;
  return [
    '[Database]',
    `DatabaseFile = ${f('virtuoso.db')}`,
    `ErrorLogFile = ${f('virtuoso.log')}`,
    `LockFile = ${f('virtuoso.lck')}`,
    `TransactionFile = ${f('virtuoso.trx')}`,
    `xa_persistent_file = ${f('virtuoso.pxa')}`,
    'ErrorLogLevel = 7',
    'FileExtend = 200',
    'MaxCheckpointRemap = 2000',
    'Striping = 0',
    'TempStorage = TempDatabase',
    '',
    '[TempDatabase]',
    `DatabaseFile = ${f('virtuoso-temp.db')}`,
    `TransactionFile = ${f('virtuoso-temp.trx')}`,
    'MaxCheckpointRemap = 2000',
    'Striping = 0',
    '',
    '[Parameters]',
    `ServerPort = ${o.host}:${o.sqlPort}`,
    'ServerThreads = 20',
    'CheckpointInterval = 0',
    `NumberOfBuffers = ${buffers}`,
    `MaxDirtyBuffers = ${Math.floor(buffers * 0.75)}`,
    `DirsAllowed = ${o.dirsAllowed.join(', ')}`,
    'MaxQueryMem = 500M',
    // ORDER BY with LIMIT/OFFSET keeps this many rows sorted (default 10,000: a larger LIMIT or OFFSET is refused).
    `MaxSortedTopRows = ${VIRTUOSO_MAX_ROWS}`,
    `VADInstallDir = ${f('vad')}`,
    '',
    '[HTTPServer]',
    `ServerPort = ${o.host}:${o.httpPort}`,
    `ServerRoot = ${o.dir}`,
    'ServerThreads = 20',
    'MaxKeepAlives = 20',
    'KeepAliveTimeout = 60',
    '',
    '[SPARQL]',
    `ResultSetMaxRows = ${VIRTUOSO_MAX_ROWS}`,
    `MaxQueryExecutionTime = ${o.maxQuerySeconds}`,
    'MaxQueryCostEstimationTime = 0',
    'DefaultGraph = urn:fkgqa:none',
    '',
  ].join('\n');
}

/**
 * Free ports on hosts, all distinct (module comment: the Unix socket named after a port is shared
 * between hosts): each found by binding port 0, all held until every one is found.
 * @param hosts one entry per port wanted
 */
export async function freePorts(hosts: string[]): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  try {
    for (const host of hosts) {
      for (;;) {
        const s = net.createServer();
        await new Promise<void>((resolve, reject) => s.once('error', reject).listen(0, host, () => resolve()));
        servers.push(s);
        const port = (s.address() as net.AddressInfo).port;
        if (!ports.includes(port)) {
          ports.push(port);
          break;
        }
      }
    }
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
  return ports;
}

/** `setpriv` of util-linux, when on the PATH: starts an instance that the kernel kills when its parent dies (`--pdeathsig KILL`). */
export const SETPRIV = (process.env.PATH ?? '')
  .split(path.delimiter)
  .map((d) => path.join(d, 'setpriv'))
  .find((f) => {
    try {
      fs.accessSync(f, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });

/** The file in an instance's folder holding its process id (setpriv execs Virtuoso in the same process). */
const PID_FILE = 'fkgqa-virtuoso.pid';

/**
 * Stops the instances a killed serve left in `dir` (the store's folder of instance folders) and
 * removes their folders: an instance is killed only when its recorded process still runs Virtuoso
 * with that folder's ini (Linux /proc; elsewhere only the folders are removed).
 * @returns the process ids killed
 */
export function removeOrphans(dir: string): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return killed;
  }
  for (const name of entries) {
    const folder = path.join(dir, name);
    try {
      const pid = Number(fs.readFileSync(path.join(folder, PID_FILE), 'utf8').trim());
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (Number.isInteger(pid) && pid > 0 && cmdline.includes(path.join(folder, 'virtuoso.ini'))) {
        process.kill(pid, 'SIGKILL');
        killed.push(pid);
      }
    } catch {
      // no pid file, or the process is gone
    }
    fs.rmSync(folder, { recursive: true, force: true });
  }
  return killed;
}

/**
 * Checks the hosts of `--store-host`: each an IPv4 address of this machine (Virtuoso's
 * `ServerPort = host:port` takes no IPv6 address, and an instance runs here), e.g. 127.0.0.2.
 * @throws Error naming the host and why
 */
export async function checkStoreHosts(hosts: string[]): Promise<void> {
  if (hosts.length === 0) throw new Error('--store-host: give at least one host');
  const seen = new Set<string>();
  for (const host of hosts) {
    if (!net.isIPv4(host)) throw new Error(`--store-host ${host}: not an IPv4 address (Virtuoso binds its ports to an IPv4 address of this machine, e.g. 127.0.0.2)`);
    if (seen.has(host)) throw new Error(`--store-host ${host}: given twice (one instance per host)`);
    seen.add(host);
    await new Promise<void>((resolve, reject) => {
      const s = net.createServer();
      s.once('error', (e: NodeJS.ErrnoException) =>
        reject(
          new Error(`--store-host ${host}: cannot listen there (${e.code ?? e.message}): not an address of this machine${host.startsWith('127.') ? '' : ' (loopback addresses 127.0.0.x always are)'}`),
        ),
      );
      s.listen(0, host, () => s.close(() => resolve()));
    });
  }
}

/** Instances running in this process: killed (and their folders removed) if the process exits without stopping them. */
const live = new Set<VirtuosoInstance>();
process.on('exit', () => {
  for (const v of live) v.kill();
});

/** A SQL string literal. */
const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** A running instance. Create with `VirtuosoInstance.start`. */
export class VirtuosoInstance {
  private child: ChildProcess;
  private exited: Promise<number | null>;
  private output = '';
  private password = 'dba';
  private stopping = false;
  /** Times its process was killed and started again on its database files (`restart`). */
  restarts = 0;

  private constructor(readonly options: VirtuosoOptions) {
    this.child = this.spawn();
    this.exited = this.exitOf(this.child);
    live.add(this);
  }

  /** Starts the process on the instance's ini (in its folder), recording its process id there. */
  private spawn(): ChildProcess {
    const o = this.options;
    // Under setpriv (util-linux) the kernel kills the instance when serve dies, even by SIGKILL; without it, the next start removes it (removeOrphans).
    const args = [VIRTUOSO_BIN, '+configfile', path.join(o.dir, 'virtuoso.ini'), '+foreground'];
    const child = SETPRIV
      ? spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', ...args], { cwd: o.dir, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(args[0], args.slice(1), { cwd: o.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) fs.writeFileSync(path.join(o.dir, PID_FILE), `${child.pid}\n`);
    const keep = (b: Buffer) => (this.output = (this.output + b.toString()).slice(-4000));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    return child;
  }

  private exitOf(child: ChildProcess): Promise<number | null> {
    return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  /** Waits until the current process answers on its SPARQL endpoint. @throws Error when it exits or does not answer within `startMs` */
  private async running(startMs: number): Promise<void> {
    const child = this.child;
    const failed = new Promise<never>((_, reject) => {
      child.once('error', (e) => reject(new Error(`could not start ${VIRTUOSO_BIN} (install virtuoso-opensource-7-bin): ${e.message}`)));
      void this.exited.then((code) => reject(new Error(`${VIRTUOSO_BIN} on ${this.address} exited (code ${code}) before it answered: ${this.output.slice(-1500)}`)));
    });
    failed.catch(() => {});
    const ended = { done: false };
    try {
      await Promise.race([this.waitReady(startMs, ended), failed]);
    } finally {
      // A process that exited (or a stop) ends the wait: no polling left to keep the event loop alive.
      ended.done = true;
    }
  }

  /** `host:port` of its HTTP server. */
  get address(): string {
    return `${this.options.host}:${this.options.httpPort}`;
  }

  /** Its SPARQL endpoint (never given to agents: the fkgqa endpoint in front of it is). */
  get sparqlUrl(): string {
    return `http://${this.address}/sparql`;
  }

  /** Its process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /**
   * Writes its ini, starts it and waits until its SPARQL endpoint answers; then replaces the DBA password by a random one.
   * @throws Error with the end of its output when it exits or does not answer within `startMs` (default 120 s)
   */
  static async start(o: VirtuosoOptions, startMs = 120_000): Promise<VirtuosoInstance> {
    fs.mkdirSync(o.dir, { recursive: true });
    fs.writeFileSync(path.join(o.dir, 'virtuoso.ini'), virtuosoIni(o));
    const v = new VirtuosoInstance(o);
    try {
      await v.running(startMs);
      const password = randomBytes(12).toString('hex');
      await v.sql(`set password "dba" "${password}";`);
      v.password = password;
    } catch (e) {
      await v.stop();
      throw e;
    }
    return v;
  }

  /**
   * Kills the process (SIGKILL: a process that stopped answering may not stop otherwise) and starts
   * it again on the same ini, ports and database files, which hold every graph loaded and
   * checkpointed (`load`) and the DBA password; waits until its SPARQL endpoint answers.
   * @throws Error with the end of its output when it exits or does not answer within `startMs`, or when the instance is being stopped
   */
  async restart(startMs = 120_000): Promise<void> {
    if (this.stopping) throw new Error(`${VIRTUOSO_BIN} on ${this.address} is being stopped`);
    this.child.kill('SIGKILL');
    await this.exited;
    if (this.stopping) throw new Error(`${VIRTUOSO_BIN} on ${this.address} is being stopped`);
    // The lock file of the killed process would stop the new one from opening the database.
    fs.rmSync(path.join(this.options.dir, 'virtuoso.lck'), { force: true });
    this.output = '';
    this.child = this.spawn();
    this.exited = this.exitOf(this.child);
    this.restarts++;
    await this.running(startMs);
  }

  /**
   * Asks its SPARQL endpoint `ASK {}` within `ms` milliseconds.
   * @returns true when it answered 200 in time, false otherwise (never rejects)
   */
  async answers(ms: number): Promise<boolean> {
    try {
      const r = await fetch(`${this.sparqlUrl}?query=${encodeURIComponent('ASK {}')}`, { signal: AbortSignal.timeout(ms) });
      await r.arrayBuffer();
      return r.ok;
    } catch {
      return false;
    }
  }

  /** Polls `ASK {}` until it answers 200, `startMs` passes (throws), or `ended.done` is set (returns). */
  private async waitReady(startMs: number, ended: { done: boolean }): Promise<void> {
    const until = Date.now() + startMs;
    while (Date.now() < until && !ended.done) {
      try {
        const r = await fetch(`${this.sparqlUrl}?query=${encodeURIComponent('ASK {}')}`, { signal: AbortSignal.timeout(2_000) });
        await r.arrayBuffer();
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    if (ended.done) return;
    throw new Error(`${VIRTUOSO_BIN} on ${this.address} did not answer within ${startMs / 1000} s: ${this.output.slice(-1500)}`);
  }

  /**
   * Runs SQL statements through `isql-vt`.
   * @throws Error with isql's output when a statement fails
   */
  sql(statements: string): Promise<string> {
    const o = this.options;
    return new Promise((resolve, reject) => {
      execFile(ISQL_BIN, [`${o.host}:${o.sqlPort}`, 'dba', this.password, `exec=${statements}`], { maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
        const out = `${stdout}${stderr}`;
        if (error || /\*\*\* Error/.test(out)) reject(new Error(`${ISQL_BIN} on ${o.host}:${o.sqlPort}: ${(out || error?.message || '').trim().slice(-1500)}`));
        else resolve(out);
      });
    });
  }

  /**
   * Loads N-Triples files into one named graph (the graph is cleared first), then checkpoints.
   * @returns the triples in the graph after loading
   */
  async load(files: string[], graph: string): Promise<number> {
    const loads = files.map((f) => `DB.DBA.TTLP_MT(file_to_string_output(${sqlString(f)}), '', ${sqlString(graph)}, 0);`).join(' ');
    await this.sql(`SPARQL CLEAR GRAPH <${graph}>; ${loads} checkpoint;`);
    return this.triplesIn(graph);
  }

  /** The triples in one named graph, counted by its SPARQL endpoint. @throws Error when the endpoint does not answer with a count */
  async triplesIn(graph: string): Promise<number> {
    const r = await fetch(this.sparqlUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/sparql-results+json' },
      body: new URLSearchParams({ query: `SELECT (COUNT(*) AS ?n) FROM <${graph}> WHERE { ?s ?p ?o }` }),
    });
    const doc = (await r.json()) as { results: { bindings: { n: { value: string } }[] } };
    return Number(doc.results.bindings[0].n.value);
  }

  /** Kills the process at once and removes its folder (synchronous: for the process's exit). */
  kill(): void {
    this.stopping = true;
    this.child.kill('SIGKILL');
    fs.rmSync(this.options.dir, { recursive: true, force: true });
    live.delete(this);
  }

  /** Stops the process (SIGTERM, then SIGKILL after 10 s) and removes its folder. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
      await this.exited;
      clearTimeout(timer);
    }
    fs.rmSync(this.options.dir, { recursive: true, force: true });
    live.delete(this);
  }
}
