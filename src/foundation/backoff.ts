/**
 * One backoff for every retry loop in hookbus: exponential from `firstMs`, capped at `capMs`, with
 * jitter, so that the many processes that retry after one event (a NATS restart, a lost
 * compare-and-set race, a leader election) do not all come back at the same instant.
 */
import { sleep } from "./time.js";

export interface BackoffOptions {
  /** The pause before the first retry (attempt 0), before jitter. */
  firstMs: number;
  /** The longest pause, before jitter. */
  capMs: number;
  /**
   * "half" (default): a random point in [d/2, d], so a retry still waits at least half the step;
   * "full": anywhere in [0, d), which spreads contenders most — for races, where the mean matters
   * less than not colliding again.
   */
  jitter?: "half" | "full";
}

/** The pause before retry number `attempt` (0 for the first retry). */
export function backoffMs(attempt: number, options: BackoffOptions): number {
  const { firstMs, capMs, jitter = "half" } = options;
  const step = Math.min(capMs, firstMs * 2 ** Math.max(0, attempt));
  return jitter === "full" ? Math.random() * step : step / 2 + Math.random() * (step / 2);
}

export interface RetryOptions extends BackoffOptions {
  /** How long to keep retrying from the first attempt. */
  waitMs: number;
  /** Whether a failure may pass with time; any other failure is thrown at once. */
  retryable(error: unknown): boolean;
  /** Told before each pause, so the caller can log what it is waiting for. */
  onRetry(error: unknown, next: { attempt: number; retryInMs: number; giveUpInMs: number }): void;
}

/**
 * Run `attempt` until it succeeds, a failure is not retryable, or `waitMs` has passed; the last
 * failure is thrown as it is (callers classify their errors before they get here).
 */
export async function retryWithBackoff<T>(
  attempt: () => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const deadline = Date.now() + options.waitMs;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      const left = deadline - Date.now();
      if (!options.retryable(error) || left <= 0) throw error;
      const delay = Math.min(backoffMs(n, options), left);
      options.onRetry(error, { attempt: n + 1, retryInMs: Math.round(delay), giveUpInMs: left });
      await sleep(delay);
    }
  }
}
