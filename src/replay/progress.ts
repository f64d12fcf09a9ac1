/**
 * A progress bar for long replays, on a terminal only: it appears once a replay has run for a
 * second or passed 1000 records, redraws at most ten times a second, and erases itself at the
 * end, so short replays and piped output never see it.
 */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** Show after this long (default 1000 ms) ... */
  afterMs?: number;
  /** ... or after this many records (default 1000), whichever comes first. */
  afterRecords?: number;
  /** Minimum time between redraws (default 100 ms). */
  intervalMs?: number;
  now?: () => number;
}

export class Progress {
  private readonly started: number;
  private readonly now: () => number;
  private readonly afterMs: number;
  private readonly afterRecords: number;
  private readonly intervalMs: number;
  private records = 0;
  private changed = 0;
  private fraction: number | undefined;
  private lastDraw = -Infinity;
  private shown = false;

  constructor(
    private readonly stream: ProgressStream | undefined,
    options: ProgressOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.started = this.now();
    this.afterMs = options.afterMs ?? 1000;
    this.afterRecords = options.afterRecords ?? 1000;
    this.intervalMs = options.intervalMs ?? 100;
  }

  /** Whether it may draw at all (a terminal). */
  get enabled(): boolean {
    return this.stream?.isTTY === true;
  }

  /** How far through the input we are (0..1), when the size of the input is known. */
  setFraction(fraction: number): void {
    this.fraction = Math.max(0, Math.min(1, fraction));
  }

  tick(changed: boolean): void {
    this.records++;
    if (changed) this.changed++;
    if (!this.enabled) return;
    const now = this.now();
    const elapsed = now - this.started;
    if (!this.shown && elapsed < this.afterMs && this.records < this.afterRecords) return;
    if (now - this.lastDraw < this.intervalMs) return;
    this.lastDraw = now;
    this.shown = true;
    this.stream!.write(`\r${this.line(elapsed)}\x1b[K`);
  }

  /** Erase the bar (call before printing the summary). */
  done(): void {
    if (this.shown) this.stream!.write("\r\x1b[K");
    this.shown = false;
  }

  line(elapsedMs: number): string {
    const rate = elapsedMs > 0 ? Math.round((this.records / elapsedMs) * 1000) : 0;
    const counts = `${this.records} records, ${this.changed} changed, ${rate}/s`;
    if (this.fraction === undefined) return `replaying: ${counts}`;
    const width = Math.max(10, Math.min(40, (this.stream?.columns ?? 80) - counts.length - 20));
    const filled = Math.round(this.fraction * width);
    const percent = `${Math.floor(this.fraction * 100)}%`.padStart(4);
    return `replaying [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${percent} ${counts}`;
  }
}
