/** The foundation's waits: a sleep that stop() can cut short, and a bounded "did it settle?". */
import { describe, expect, it } from "vitest";
import { settlesWithin } from "../../../src/foundation/deadline.js";
import { sleep } from "../../../src/foundation/time.js";

describe("sleep", () => {
  it("ends at once when woken, long before its time", async () => {
    let wake: (() => void) | undefined;
    const started = Date.now();
    const waiting = sleep(60_000, { unref: true, onWake: (w) => (wake = w) });
    wake?.();
    await waiting;
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("settlesWithin", () => {
  it("is true for work that resolves or rejects in time", async () => {
    expect(await settlesWithin(Promise.resolve(1), 1000)).toBe(true);
    expect(await settlesWithin(Promise.reject(new Error("no")), 1000)).toBe(true);
  });

  it("is false for work that does not settle in time", async () => {
    expect(await settlesWithin(new Promise(() => {}), 20)).toBe(false);
  });
});
