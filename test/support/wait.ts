/**
 * Waiting in tests: poll until a condition holds, sleep, await a rejection, hold a handler open.
 */

/**
 * Poll `check` every 10 ms until it returns something other than `undefined` or `false`, and
 * resolve with that value; fail with `<what> not met within <timeoutMs> ms` after the deadline.
 */
export async function until<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 5000,
  what = "condition",
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(10);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The promise's rejection (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** A promise with its resolver, for handlers the test holds open. */
export function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}
