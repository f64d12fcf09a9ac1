/**
 * Bounds how many handlers run at once in a runner and keeps track of the ones running, so that
 * `stop()` can wait for every accepted request to be answered (and every observation acked).
 */
export class InFlight {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly tasks = new Set<Promise<void>>();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
    }
  }

  get size(): number {
    return this.tasks.size;
  }

  /** Tasks accepted but still waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Run `task` once a slot is free. The returned promise resolves when the task has *started*
   * (so a caller pulling messages slows down while every slot is busy); the task's own errors
   * are the task's business: it must not reject.
   */
  async run(task: () => Promise<void>): Promise<void> {
    let started!: () => void;
    const start = new Promise<void>((resolve) => (started = resolve));
    const tracked = this.acquire()
      .then(async () => {
        started();
        try {
          await task();
        } finally {
          this.release();
        }
      })
      .catch(() => {}); // tasks report their own failures; this only keeps the count right
    this.tasks.add(tracked);
    void tracked.then(() => this.tasks.delete(tracked));
    await start;
  }

  /** Resolves when every task accepted so far (and any accepted meanwhile) has finished. */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.allSettled([...this.tasks]);
  }

  private acquire(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next === undefined) this.running--;
    else next(); // the slot passes straight to the next task
  }
}
