/**
 * The chaos run's watchdog (bench/chaos/watchdog.ts): a call in flight past its limit fails the
 * run at once, naming it; calls that end in time, or fail in time, never do.
 */
import { describe, expect, it } from "vitest";
import { CallWatchdog } from "../../../bench/chaos/watchdog.js";

describe("chaos call watchdog", () => {
  it("fails the run, naming the call, when a call outlives its limit", async () => {
    const watchdog = new CallWatchdog(50);
    try {
      void watchdog.watch("never-answered", () => new Promise<never>(() => {}));
      await expect(watchdog.failed).rejects.toThrow(/never-answered/);
      expect(watchdog.overdue).toEqual(["never-answered"]);
    } finally {
      watchdog.stop();
    }
  });

  it("stays quiet for calls that answer or fail within their limit", async () => {
    const watchdog = new CallWatchdog(300);
    try {
      await expect(watchdog.watch("answered", () => Promise.resolve("ok"))).resolves.toBe("ok");
      await expect(
        watchdog.watch("failed", () => Promise.reject(new Error("coded failure"))),
      ).rejects.toThrow("coded failure");
      // Past the limit of both: neither is in flight any more, so neither is overdue.
      const outcome = await Promise.race([
        watchdog.failed.then(
          () => "failed",
          () => "failed",
        ),
        new Promise((r) => setTimeout(() => r("quiet"), 500)),
      ]);
      expect(outcome).toBe("quiet");
      expect(watchdog.overdue).toEqual([]);
    } finally {
      watchdog.stop();
    }
  });
});
