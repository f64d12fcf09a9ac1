/**
 * "Full jitter" exponential backoff: after the n-th lost race wait a random time in
 * [0, min(max, base * 2^(n-1))). Randomness matters more than the mean here: workers that lost
 * the same compare-and-set race must not all come back at the same instant and collide again.
 */
export interface BackoffOptions {
  baseMs: number;
  maxMs: number;
}

export function backoffDelay(attempt: number, { baseMs, maxMs }: BackoffOptions): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.random() * ceiling;
}
