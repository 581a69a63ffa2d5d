/**
 * Progress of long work for a `progress` callback (the CLI prints its lines on stderr through
 * `stderrProgress`): every `everyMs` a line with the work done out of the total, the elapsed time,
 * and the items running for longer than `longMs`, e.g.
 * `fkgqa verify: 412/1088 queries done, 95 s; running long: world_1/q32 (40 s)` (with `unit` 'queries').
 * The timer does not keep the process alive; `stop()` ends it.
 */
export class ProgressTicker {
  private doneCount = 0;
  private readonly running = new Map<string, number>();
  private readonly t0: number;
  private timer: NodeJS.Timeout | undefined;

  /**
   * @param log receives the lines
   * @param label first word of each line (the command)
   * @param total items of work in all
   * @param options `everyMs` interval of the lines in ms (default 10 000; 0: no timer, call `tick`);
   *   `longMs` how long an item runs before it is named (default 5 000 ms); `now` a clock in ms;
   *   `unit` what is counted, said after the count (e.g. 'queries'; default: nothing)
   */
  constructor(
    private readonly log: (line: string) => void,
    private readonly label: string,
    private readonly total: number,
    private readonly options: { everyMs?: number; longMs?: number; now?: () => number; unit?: string } = {},
  ) {
    this.t0 = this.now();
    const every = options.everyMs ?? 10_000;
    if (every > 0) {
      this.timer = setInterval(() => this.tick(), every);
      this.timer.unref();
    }
  }

  private now(): number {
    return this.options.now ? this.options.now() : performance.now();
  }

  /** Marks an item (e.g. a query id) as running. */
  start(id: string): void {
    this.running.set(id, this.now());
  }

  /** Marks an item as done (it need not have been started). */
  done(id: string): void {
    this.running.delete(id);
    this.doneCount++;
  }

  /** The progress line as of now. */
  line(): string {
    const now = this.now();
    const s = (ms: number) => `${Math.round(ms / 1000)} s`;
    const long = [...this.running]
      .filter(([, t]) => now - t >= (this.options.longMs ?? 5_000))
      .sort((a, b) => a[1] - b[1])
      .map(([id, t]) => `${id} (${s(now - t)})`);
    return `${this.label}: ${this.doneCount}/${this.total}${this.options.unit ? ` ${this.options.unit}` : ''} done, ${s(now - this.t0)}` + (long.length ? `; running long: ${long.join(', ')}` : '');
  }

  /** Writes the progress line now. */
  tick(): void {
    this.log(this.line());
  }

  /** Stops the timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
