/**
 * A bounded sample of the fuzz suite (`npm run fuzz` runs 10,000): hostile call, observe and
 * policy-reply messages against a real coordinator process. It must not crash, must answer what it
 * answers with a coded error or a valid reply, and must store only schema-valid records.
 */
import { describe, expect, it } from "vitest";
import { runFuzz } from "./run-fuzz.js";

describe("fuzz sample", () => {
  it("a coordinator survives hostile messages, answers only with coded errors or valid replies, and stores valid records", async () => {
    const report = await runFuzz({ count: 16, seed: 7, concurrency: 8, deadlineMs: 2000 });
    expect(report.sent).toBe(16);
    expect(report.crashes).toBe(0);
    expect(report.unanswered).toEqual([]);
    expect(report.uncoded).toEqual([]);
    expect(report.badRecords).toEqual([]);
    // The debug-only memory probe answered: settled figures before and after the round.
    expect(report.memory?.rounds).toHaveLength(1);
    expect(report.memory!.before.heapUsedMiB).toBeGreaterThan(0);
    expect(report.memory!.after.rssMiB).toBeGreaterThan(0);
  }, 120_000);
});
