/**
 * A small schedule of the chaos suite (`npm run chaos`): every role its own CLI process, kill -9
 * of a worker, the indexer, a coordinator and the sealer, a cut of the indexer's PostgreSQL
 * connections, and a NATS kill -9 and restart, under concurrent sessions; then the log must be
 * sealed through its end, `audit verify --key --coordinator-keys` find nothing (a killed
 * coordinator's crash tail is named, not a finding), no call may have outlived its deadline by a
 * second, and PostgreSQL must hold every log record exactly once and nothing else.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runChaos, summaryLine } from "../../../bench/chaos/run.js";

describe("chaos (small schedule)", () => {
  it("loses, duplicates, gets wrong and hangs no call, and verifies sealed, through kills of every role", async () => {
    // The roles' logs: removed when the test passes, kept (and named) when it fails.
    const runDir = await mkdtemp(join(tmpdir(), "hookbus-chaos-test-"));
    const result = await runChaos({
      runDir,
      sessions: 24,
      callsPerSession: 10,
      concurrency: 12,
      timeoutMs: 5000,
      index: true,
      schedule: [
        { at: 0.2, fault: "worker" },
        { at: 0.3, fault: "indexer" },
        { at: 0.45, fault: "coordinator" },
        { at: 0.55, fault: "pg-cut" },
        { at: 0.6, fault: "sealer" },
        { at: 0.7, fault: "nats" },
      ],
    });
    console.log(
      summaryLine(result),
      JSON.stringify(result.errors),
      JSON.stringify(result.failedAnswers),
      JSON.stringify(result.verify),
      JSON.stringify(result.index),
      `role logs: ${runDir}`,
    );
    // No role died by itself (a sealer that could not reach NATS on its restart used to).
    expect(result.unexpectedExits, `role logs: ${runDir}`).toEqual([]);
    expect(result.lost).toBe(0);
    expect(result.duplicates).toBe(0);
    expect(result.wrong).toBe(0);
    expect(result.hung).toBe(0);
    expect(result.overdue).toEqual([]);
    expect(result.recoveries).toHaveLength(5);
    // The index equals the log through the indexer's kill and the PostgreSQL cut.
    expect(result.index?.logRecords).toBeGreaterThan(0);
    expect(result.index).toMatchObject({ missing: 0, extra: 0, duplicates: 0 });
    expect(result.index?.rows).toBe(result.index?.logRecords);
    // Tamper evidence survives the faults: everything sealed, and verify finds nothing.
    expect(result.verify.unsealed).toBe(0);
    expect(result.verify.records).toBeGreaterThan(0);
    expect(result.verify.sealed).toBe(result.verify.records);
    expect(result.verify.findingKinds).toEqual({});
    expect(result.verifyFindings).toBe(0);
    // Margin for a loaded 2-core machine (the goal is 2 s).
    expect(result.maxRecoveryS).toBeLessThan(8);
    // Only outage codes, and most calls answered.
    for (const code of Object.keys(result.errors)) {
      expect([
        "HOOKBUS_CALL_TIMEOUT",
        "HOOKBUS_COORDINATOR_UNAVAILABLE",
        "HOOKBUS_LOG_UNAVAILABLE",
      ]).toContain(code);
    }
    expect(result.answered).toBeGreaterThan(result.calls / 2);
    await rm(runDir, { recursive: true, force: true });
  }, 240_000);
});
