/**
 * The fuzz categories against both worker SDKs (worker-fuzz.ts): one strict-JSON, coded answer to
 * every hostile request, and no crash. The Python run is skipped, saying so, only without the
 * environment `bash scripts/setup.sh` creates.
 */
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fuzzWorker, type WorkerFuzzReport } from "./worker-fuzz.js";

const PYTHON_WORKER = ".tools/python/bin/hookbus-worker";
const python = existsSync(PYTHON_WORKER);
if (!python) console.warn(`worker-fuzz: Python run skipped, no ${PYTHON_WORKER}`);

function expectClean(report: WorkerFuzzReport, count: number): void {
  expect(report.crashed, report.workerOutput).toBe(false);
  expect(report.sent + report.skipped).toBe(count);
  expect(report.unanswered).toEqual([]);
  expect(report.bad).toEqual([]);
  expect(report.answered).toBe(report.sent);
  // Most categories are refusals: the sample must have reached more than the happy path.
  expect(Object.keys(report.codes).length).toBeGreaterThanOrEqual(5);
}

describe("worker fuzz", () => {
  it.skipIf(!python)(
    "the Python worker answers every fuzz category with strict JSON and a coded error or a verdict",
    async () => {
      const report = await fuzzWorker({
        command: [PYTHON_WORKER, "examples/python/conformance_policy.py:conformance"],
        policy: "conformance",
        count: 300,
        seed: 31,
      });
      expectClean(report, 300);
    },
    120_000,
  );

  it("the TypeScript worker does too", async () => {
    const report = await fuzzWorker({
      command: [process.execPath, "bin/hookbus.js", "worker", "examples/conformance-policy.ts"],
      policy: "conformance",
      count: 300,
      seed: 31,
    });
    expectClean(report, 300);
  }, 120_000);
});
