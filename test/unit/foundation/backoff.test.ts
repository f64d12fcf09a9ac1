import { describe, expect, it } from "vitest";
import { backoffMs, retryWithBackoff } from "../../../src/foundation/backoff.js";

describe("backoffMs", () => {
  it("doubles from firstMs up to capMs, half jitter keeping at least half the step", () => {
    for (let attempt = 0; attempt < 12; attempt++) {
      const step = Math.min(1000, 50 * 2 ** attempt);
      for (let i = 0; i < 50; i++) {
        const d = backoffMs(attempt, { firstMs: 50, capMs: 1000 });
        expect(d).toBeGreaterThanOrEqual(step / 2);
        expect(d).toBeLessThanOrEqual(step);
      }
    }
  });

  it("full jitter spreads over [0, step) and stays finite for huge attempts", () => {
    const samples = Array.from({ length: 200 }, () =>
      backoffMs(5000, { firstMs: 10, capMs: 80, jitter: "full" }),
    );
    expect(Math.max(...samples)).toBeLessThan(80);
    expect(Math.min(...samples)).toBeLessThan(40); // half jitter could never go below 40
    expect(samples.every(Number.isFinite)).toBe(true);
  });
});

describe("retryWithBackoff", () => {
  const quiet = { firstMs: 1, capMs: 4, onRetry: () => {} };

  it("retries a retryable failure until the attempt succeeds", async () => {
    let calls = 0;
    const retries: number[] = [];
    const value = await retryWithBackoff(
      () => {
        if (++calls < 4) return Promise.reject(new Error("not yet"));
        return Promise.resolve("ok");
      },
      { ...quiet, waitMs: 5000, retryable: () => true, onRetry: (_, n) => retries.push(n.attempt) },
    );
    expect(value).toBe("ok");
    expect(retries).toEqual([1, 2, 3]);
  });

  it("throws a failure that is not retryable at once", async () => {
    let calls = 0;
    const failure = new Error("bad input");
    await expect(
      retryWithBackoff(
        () => {
          calls++;
          return Promise.reject(failure);
        },
        { ...quiet, waitMs: 5000, retryable: () => false },
      ),
    ).rejects.toBe(failure);
    expect(calls).toBe(1);
  });

  it("gives up with the last failure once waitMs has passed", async () => {
    const started = Date.now();
    let calls = 0;
    const error = await retryWithBackoff(
      () => {
        return Promise.reject(new Error(`attempt ${++calls}`));
      },
      { ...quiet, waitMs: 60, retryable: () => true },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`attempt ${calls}`);
    expect(calls).toBeGreaterThan(1);
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
