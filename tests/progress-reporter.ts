/**
 * A vitest reporter that shows progress per test file on stderr, beside the default reporter: a
 * line when a file starts, one when it ends (its counts and time), and every 30 s the files still
 * running with the test each is on and for how long — so that no test file runs for minutes
 * without a line of output.
 */
import type { Reporter, TestCase, TestModule, TestSpecification } from 'vitest/node';

const HEARTBEAT_MS = 30_000;

export default class ProgressReporter implements Reporter {
  private files = 0;
  private done = 0;
  private readonly running = new Map<string, { started: number; test?: string; testStarted?: number }>();
  private timer: NodeJS.Timeout | undefined;

  private line(text: string): void {
    process.stderr.write(`[progress] ${text}\n`);
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>): void {
    this.files = specifications.length;
    this.timer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  onTestModuleStart(m: TestModule): void {
    this.running.set(m.moduleId, { started: performance.now() });
    this.line(`▶ ${m.relativeModuleId} started (${this.running.size} running, ${this.done}/${this.files} files done)`);
  }

  onTestCaseReady(t: TestCase): void {
    const r = this.running.get(t.module.moduleId);
    if (r) {
      r.test = t.fullName;
      r.testStarted = performance.now();
    }
  }

  onTestModuleEnd(m: TestModule): void {
    const r = this.running.get(m.moduleId);
    this.running.delete(m.moduleId);
    this.done++;
    const counts = { passed: 0, skipped: 0, failed: 0 };
    for (const t of m.children.allTests()) {
      const s = t.result().state;
      if (s === 'passed') counts.passed++;
      else if (s === 'failed') counts.failed++;
      else counts.skipped++;
    }
    const secs = r ? ((performance.now() - r.started) / 1000).toFixed(1) : '?';
    this.line(`■ ${m.relativeModuleId}: ${counts.passed} passed, ${counts.skipped} skipped, ${counts.failed} failed in ${secs} s (${this.done}/${this.files} files done)`);
  }

  private heartbeat(): void {
    const now = performance.now();
    for (const [id, r] of this.running) {
      const name = id.slice(id.lastIndexOf('/tests/') + 1);
      const at = r.test ? `: "${r.test}" for ${((now - (r.testStarted ?? now)) / 1000).toFixed(0)} s` : ': collecting';
      this.line(`… ${name} running for ${((now - r.started) / 1000).toFixed(0)} s${at}`);
    }
  }

  onTestRunEnd(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
