/** Small time helpers shared by calls and observations: every wait is bounded by a deadline. */
import { backoffMs } from "./backoff.js";
import { HookbusError, type ErrorCode } from "./errors.js";

/**
 * The least time worth one more attempt: enough for a local "no responders" or a PubAck. With
 * less left, retrying would only turn "nobody answered" into a misleading timeout.
 */
export const MIN_ATTEMPT_MS = 20;

/**
 * How long to pause before the next attempt so that at least MIN_ATTEMPT_MS remain for it, or
 * undefined when no attempt fits before the deadline any more.
 */
export function pauseBeforeRetry(
  attempt: number,
  deadline: number,
  capMs?: number,
): number | undefined {
  const room = deadline - Date.now() - MIN_ATTEMPT_MS;
  if (room < 0) return undefined;
  // 20, 40, 80, ... ms, capped, with jitter so retrying agents spread out.
  return Math.min(backoffMs(attempt, { firstMs: 20, capMs: capMs ?? 250 }), room);
}

/**
 * Settle with `work`, or reject with `code` when the deadline passes first. `work` keeps running
 * (nothing here can cancel it); a late rejection of it is swallowed, never unhandled.
 */
export function beforeDeadline<T>(
  work: Promise<T>,
  deadline: number,
  code: ErrorCode,
  message: () => string,
  details: Record<string, unknown> = {},
): Promise<T> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) {
    work.catch(() => {});
    return Promise.reject(new HookbusError(code, message(), details));
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HookbusError(code, message(), details)), remaining);
  });
  work.catch(() => {});
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}

/** Whether `work` settled (resolved or rejected) within `ms`; it keeps running either way. */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = work.then(
    () => true as const,
    () => true as const,
  );
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
