/** Waiting, in one place: every retry loop in hookbus pauses through this. */
export interface SleepOptions {
  /** Let the process exit while this waits (standbys, reconnect loops). */
  unref?: boolean;
  /** Handed a function that ends the wait at once (stop() calls it). */
  onWake?: (wake: () => void) => void;
}

export function sleep(ms: number, options: SleepOptions = {}): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, ms));
    if (options.unref === true) timer.unref();
    options.onWake?.(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
