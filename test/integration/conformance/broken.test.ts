/**
 * The kit is not vacuous: a worker that answers late, answers twice or answers with a verdict of
 * the wrong shape fails it (exit 1, HOOKBUS_CONFORMANCE_FAILED, the case named in the table).
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

function kit(mode: string, only: string) {
  return spawnSync(
    process.execPath,
    [
      "bin/hookbus.js",
      "conformance",
      "worker",
      "--policy",
      "conformance",
      "--only",
      only,
      "--",
      process.execPath,
      "--import",
      "tsx",
      "test/fixtures/conformance/broken-worker.ts",
    ],
    {
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, BROKEN_MODE: mode },
    },
  );
}

describe("conformance kit: broken workers fail it", () => {
  it.each([
    ["late", "deadline in the body: no answer after it", /answered \d+ ms after a 300 ms deadline/],
    [
      "late",
      "deadline in Hookbus-Timeout-Ms: no answer after it",
      /answered \d+ ms after a 300 ms deadline/,
    ],
    ["twice", "event: before_tool_call", /answered 2 times/],
    ["shape", "verdict: block", /verdict not allowed for before_tool_call/],
  ])(
    "a worker that answers %s fails %s",
    (mode, only, difference) => {
      const run = kit(mode, only);
      expect(run.status, run.stderr).toBe(1);
      const line = run.stdout.split("\n").find((l) => l.startsWith(only));
      expect(line).toMatch(/\bFAIL\b/);
      expect(run.stdout).toMatch(difference);
      expect(run.stderr).toContain("HOOKBUS_CONFORMANCE_FAILED");
    },
    130_000,
  );

  it("the same fixture passes those cases when it is not broken", () => {
    const run = kit("none", "event: before_tool_call");
    expect(run.status, run.stdout).toBe(0);
  }, 130_000);
});
