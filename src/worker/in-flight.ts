/**
 * Bounds how many handlers run at once in a runner and keeps track of the ones running, so that
 * `stop()` can wait for every accepted request to be answered (and every observation acked).
 *
 * Counters, not a set of promises: this is on every request a worker serves, and a task started
 * in a free slot costs one `.then` here, not a chain of promises per task.
 */
const STARTED: Promise<void> = Promise.resolve();

export class InFlight {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly idleWaiters: (() => void)[] = [];
  /** Settles a finished task's slot; one function for every task, not a closure per task. */
  private readonly settled = (): void => this.release();

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`concurrency must be a positive integer, got ${limit}`);
    }
  }

  /** Tasks accepted and not finished: running or waiting for a slot. */
  get size(): number {
    return this.running + this.waiting.length;
  }

  /** Tasks accepted but still waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Run `task` once a slot is free: at once, before this returns, when one is. The returned
   * promise resolves when the task has *started* (so a caller pulling messages slows down while
   * every slot is busy); the task's own errors are the task's business: it must not reject (a
   * rejection only frees its slot).
   */
  run(task: () => Promise<void>): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      this.start(task);
      return STARTED;
    }
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.start(task);
        resolve();
      }),
    );
  }

  /** Resolves when every task accepted so far (and any accepted meanwhile) has finished. */
  idle(): Promise<void> {
    if (this.size === 0) return STARTED;
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private start(task: () => Promise<void>): void {
    let done: Promise<void>;
    try {
      done = task();
    } catch {
      done = STARTED; // a task that throws before its first await: only its slot matters here
    }
    done.then(this.settled, this.settled);
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next !== undefined) {
      next(); // the slot passes straight to the next task
      return;
    }
    this.running--;
    if (this.running === 0) {
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }
}
