/**
 * The conformance kit against the reference implementation: the TypeScript worker SDK
 * (`hookbus worker` serving examples/conformance-policy.ts) passes every case, through the CLI
 * as a user runs it.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../../src/conformance/index.js";

describe("conformance kit: the TypeScript worker SDK", () => {
  it("passes every case (hookbus conformance worker --json)", () => {
    const run = spawnSync(
      process.execPath,
      [
        "bin/hookbus.js",
        "conformance",
        "worker",
        "--policy",
        "conformance",
        "--json",
        "--",
        process.execPath,
        "bin/hookbus.js",
        "worker",
        "examples/conformance-policy.ts",
        "--log-level",
        "warn",
      ],
      { encoding: "utf8", timeout: 280_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const report = JSON.parse(run.stdout) as ConformanceReport;
    const failed = report.cases.filter((c) => !c.ok);
    expect(failed, report.workerOutput).toEqual([]);
    expect(report.cases.length).toBeGreaterThan(30);
    expect(run.status).toBe(0);
  }, 300_000);
});
