/**
 * The chaos run's watchdog: every call the driver makes is watched, and one still unanswered a
 * second past its own deadline fails the run at once (with the call ids), instead of hanging it
 * or being counted afterwards. A call's deadline is the client's promise to the agent; a call
 * that outlives it is a bug whatever the fault was.
 */

/** How often the calls in flight are looked at. */
const CHECK_EVERY_MS = 100;

export class CallWatchdog {
  private readonly inFlight = new Map<string, number>();
  /** Calls seen in flight past `limitMs` (each named once). */
  readonly overdue: string[] = [];
  /** Rejects when the first call is overdue; never resolves. */
  readonly failed: Promise<never>;
  private fail: (error: Error) => void = () => {};
  private readonly timer: NodeJS.Timeout;

  /** `limitMs`: a call's deadline plus the second it may overrun it by. */
  constructor(private readonly limitMs: number) {
    this.failed = new Promise<never>((_, reject) => (this.fail = reject));
    this.failed.catch(() => {});
    this.timer = setInterval(() => this.check(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  async watch<T>(callId: string, call: () => Promise<T>): Promise<T> {
    this.inFlight.set(callId, Date.now());
    try {
      return await call();
    } finally {
      this.inFlight.delete(callId);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private check(): void {
    const now = Date.now();
    const before = this.overdue.length;
    for (const [callId, sentAt] of this.inFlight) {
      if (now - sentAt > this.limitMs && !this.overdue.includes(callId)) this.overdue.push(callId);
    }
    if (before === 0 && this.overdue.length > 0) {
      this.fail(
        new Error(
          `chaos watchdog: call(s) ${this.overdue.join(", ")} still unanswered ${this.limitMs} ms ` +
            "after they were sent (their deadline plus 1 s)",
        ),
      );
    }
  }
}
