/**
 * A bounded sample of the fuzz suite (`npm run fuzz` runs 10,000): hostile call, observe and
 * policy-reply messages against a real coordinator process. It must not crash, must answer what it
 * answers with a coded error or a valid reply, and must store only schema-valid records.
 */
import { describe, expect, it } from "vitest";
import { runFuzz } from "./run-fuzz.js";

describe("fuzz sample", () => {
  it("a coordinator survives hostile messages, answers only with coded errors or valid replies, and stores valid records", async () => {
    const report = await runFuzz({
      count: 16,
      seed: 7,
      concurrency: 8,
      deadlineMs: 2000,
      verify: true,
    });
    expect(report.sent).toBe(16);
    expect(report.crashes).toBe(0);
    expect(report.unanswered).toEqual([]);
    expect(report.uncoded).toEqual([]);
    expect(report.badRecords).toEqual([]);
    // The debug-only memory probe answered: settled figures before and after the round.
    expect(report.memory?.rounds).toHaveLength(1);
    expect(report.memory!.before.heapUsedMiB).toBeGreaterThan(0);
    expect(report.memory!.after.rssMiB).toBeGreaterThan(0);
    // Sealed alongside and verified with the sealer's and the coordinator's keys: the fuzzer
    // never writes to the log itself, so every record is hookbus's own and no finding may remain
    // (issue 21: verify names only tampering, not refused garbage).
    expect(report.verify?.findings).toEqual([]);
    expect(report.verify?.exitCode).toBe(0);
    expect(report.verify?.records).toBe(report.records);
    expect(report.verify?.sealed).toBe(report.records);
    expect(report.verify!.signedRecords + report.verify!.pendingSignatures).toBe(report.records);
  }, 120_000);

  it("audit verify finds nothing on a larger fuzzed, sealed and signed log (no false alarm)", async () => {
    // More kinds of garbage than the sample above; only verify is judged here (the answers are).
    const report = await runFuzz({
      count: 300,
      seed: 3,
      concurrency: 8,
      deadlineMs: 3000,
      verify: true,
    });
    expect(report.crashes).toBe(0);
    expect(report.records).toBeGreaterThan(200);
    expect(report.verify?.findings).toEqual([]);
    expect(report.verify?.exitCode).toBe(0);
    expect(report.verify?.sealed).toBe(report.records);
  }, 120_000);
});
