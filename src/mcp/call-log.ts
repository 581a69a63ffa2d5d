/**
 * The call log of `fkgqa mcp`: one entry per tool call, kept in memory (for the evaluation harness
 * in the same process) and appended as a JSON line to a file (default
 * `<build>.state/mcp/calls.jsonl`, or `--call-log <file>`). The paper's evaluation logs every step
 * (section 5) and reports endpoint accuracy from the endpoints an agent consulted (section 6).
 */
import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../common/errors.js';

/** One tool call. */
export interface CallLogEntry {
  /** ISO 8601 time the call started. */
  time: string;
  /** Tool name (`run_sparql_query`, `get_void_descriptions`, or another tool set's). */
  tool: string;
  /** The setup of the server (`baseline`, `high_level`, `void_tool`). */
  setup: string;
  /** The query as the agent sent it (run_sparql_query). */
  query?: string;
  /**
   * How the call was answered: `direct` (lone SERVICE stripped, sent to one endpoint),
   * `federation` (the local federation engine), `error` (refused or failed), or a tool's own
   * kind (`void`, …).
   */
  route: 'direct' | 'federation' | 'error' | string;
  /** Endpoint URLs the call named (SERVICE targets; endpoints asked for VoID). */
  endpoints: string[];
  /**
   * HTTP requests sent per endpoint URL (without query string). For the federation engine this
   * includes its service-description probes and COUNT queries; null when unknown (the engine was
   * stopped at the time limit).
   */
  requests: Record<string, number> | null;
  /** Rows (bindings, or triples for a graph result; 1 for ASK) of the full answer, before truncation. */
  rows?: number;
  /** The answer shown to the agent was cut to a preview. */
  truncated?: boolean;
  /** Wall-clock time of the call, in ms. */
  ms: number;
  /** Why the call failed: `timeout`, `syntax`, `unknown-prefix`, `update`, `no-service`, `unknown-endpoint`, `endpoint`, … */
  errorClass?: string;
  /** The message the agent got for a failed call. */
  error?: string;
  /** The failure was the infrastructure's (an endpoint or the engine down, 5xx, faulted), not the agent's (`_meta["fkgqa/error"]`). */
  infrastructure?: boolean;
  /** Tool-specific facts (e.g. the VoID step per endpoint). */
  details?: Record<string, unknown>;
}

/**
 * Tool calls in order, in memory and (when a file is given) as JSON lines. Writes are synchronous
 * appends, so the file is complete whenever a call has returned. The file is opened for appending
 * at the first entry and kept open until `close` (one write per call instead of open, write and
 * close); an entry after `close` opens it again.
 */
export class CallLog {
  /** Every entry recorded in this process, in order. */
  readonly entries: CallLogEntry[] = [];
  private readonly listeners = new Set<(e: CallLogEntry) => void>();

  /**
   * @param file append each entry to this file (its folder is created), or none
   * @throws InputError when the file is an existing folder (every tool call would fail)
   */
  constructor(readonly file: string | null = null) {
    if (file && fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw new InputError('the call log is a folder: give the name of a JSON-lines file (--call-log FILE)', { file });
    if (file) fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  }

  private fd: number | null = null;

  /** Records one entry (and appends it to the file). */
  record(entry: CallLogEntry): void {
    this.entries.push(entry);
    if (this.file) this.append(Buffer.from(JSON.stringify(entry) + '\n'));
    for (const l of this.listeners) l(entry);
  }

  /** Appends bytes to the file through the kept descriptor (opened at the first entry). */
  private append(bytes: Buffer): void {
    this.fd ??= fs.openSync(this.file!, 'a');
    for (let at = 0; at < bytes.length;) at += fs.writeSync(this.fd, bytes, at);
  }

  /** Closes the file (a later entry opens it again). */
  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    fs.closeSync(fd);
  }

  /** Calls `listener` for every later entry; returns a function that stops it. */
  subscribe(listener: (e: CallLogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
