/**
 * The Python SDK (python/): its own tests (pytest) and the conformance kit against the Python
 * conformance policy, run with the virtual environment `bash scripts/setup.sh` creates in
 * .tools/python. Skipped, saying so, only on a machine without Python >= 3.10; with such a Python
 * but no environment, it fails and says to run the setup.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../../src/conformance/index.js";

const VENV_PYTHON = ".tools/python/bin/python";
/** The SDK of this checkout, not the copy the setup installed into .tools/python (maybe older). */
const WORKTREE_SDK = { ...process.env, PYTHONPATH: "python/src" };

function systemPythonOk(): boolean {
  const probe = spawnSync(
    "python3",
    ["-c", "import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)"],
    { encoding: "utf8" },
  );
  return probe.status === 0;
}

const pythonPresent = existsSync(VENV_PYTHON) || systemPythonOk();
if (!pythonPresent)
  console.warn("python.test.ts skipped: no Python >= 3.10 on this machine (python3)");

describe.skipIf(!pythonPresent)("the Python worker SDK", () => {
  it("has its environment (bash scripts/setup.sh creates .tools/python)", () => {
    expect(existsSync(VENV_PYTHON), "run `bash scripts/setup.sh` to install the Python SDK").toBe(
      true,
    );
  });

  it("passes its unit tests (pytest)", () => {
    const run = spawnSync(VENV_PYTHON, ["-m", "pytest", "-q", "python/tests"], {
      encoding: "utf8",
      timeout: 120_000,
      env: WORKTREE_SDK,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/\d+ passed/);
  }, 130_000);

  it("passes the conformance kit (hookbus-worker serving examples/python/conformance_policy.py)", () => {
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
        ".tools/python/bin/hookbus-worker",
        "examples/python/conformance_policy.py:conformance",
        "--log-level",
        "warning",
      ],
      { encoding: "utf8", timeout: 280_000, maxBuffer: 16 * 1024 * 1024, env: WORKTREE_SDK },
    );
    const report = JSON.parse(run.stdout) as ConformanceReport;
    expect(
      report.cases.filter((c) => !c.ok),
      report.workerOutput,
    ).toEqual([]);
    expect(report.cases.length).toBeGreaterThan(30);
    expect(run.status).toBe(0);
  }, 300_000);
});
