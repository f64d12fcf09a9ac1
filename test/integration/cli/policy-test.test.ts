/**
 * `hookbus policy test`: the example policies' fixtures pass through the CLI; a wrong
 * expectation fails with exit 1 and says which field; a malformed fixture is a coded error with
 * its line and column. No NATS server: policy tests run in process.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startChild } from "../../support/child.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const examples = (file: string) =>
  fileURLToPath(new URL(`../../../services/policies/${file}`, import.meta.url));
const FIXTURE = examples("examples.policy-test.json");
const dir = mkdtempSync(join(tmpdir(), "hookbus-policy-test-"));

async function hookbus(args: string[]) {
  // An unreachable server: a policy test must not need one.
  const child = startChild([cli, ...args], { NATS_URL: "nats://127.0.0.1:1" });
  const code = await child.exited;
  return { code, stdout: child.output(), stderr: child.errors() };
}

describe("hookbus policy test", { timeout: 120_000 }, () => {
  it("the example policies pass their fixtures", async () => {
    const run = await hookbus(["policy", "test", FIXTURE, "--json"]);
    expect(run.stderr).toBe("");
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const summary = lines.pop();
    expect(lines.map((l) => [l.name, l.status])).toContainEqual([
      "after reading a web page, sending email is blocked by taint-guard",
      "pass",
    ]);
    expect(lines.every((l) => l.status === "pass")).toBe(true);
    expect(summary).toEqual({ summary: { passed: lines.length, failed: 0, errors: 0 } });
    expect(run.code).toBe(0);
  });

  it("a case that gets another decision fails (exit 1) and names the field", async () => {
    const fixture = JSON.parse(readFileSync(FIXTURE, "utf8")) as {
      policies: string[];
      registry: string;
      cases: Array<{ name: string; expect: Record<string, unknown> }>;
    };
    // Paths stay relative to the original fixture.
    const broken = {
      cases: [{ ...fixture.cases[1]!, expect: { outcome: "allow" } }, fixture.cases[0]],
    };
    const path = join(dir, "broken.json");
    writeFileSync(path, JSON.stringify(broken));
    const run = await hookbus([
      "policy",
      "test",
      path,
      "--policies",
      examples("index.ts"),
      "--registry",
      examples("registry.example.json"),
    ]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain(`FAIL  ${fixture.cases[1]!.name}`);
    expect(run.stdout).toContain('outcome: expected "allow", got "block"');
    expect(run.stdout).toContain('blocked by "tool-policy"');
    expect(run.stdout).toContain("2 cases: 1 passed, 1 failed");
  });

  it("a malformed fixture is HOOKBUS_INVALID_FIXTURE with its line and column", async () => {
    const path = join(dir, "bad.ndjson");
    writeFileSync(
      path,
      '{"name":"ok","hook":"before_tool_call","event":{},"expect":{"outcome":"allow"}}\n{"name": "x",, }\n',
    );
    const run = await hookbus(["policy", "test", path]);
    expect(run.stderr.trim()).toMatch(
      /^HOOKBUS_INVALID_FIXTURE: .*bad\.ndjson:2:14: expected a "key"/,
    );
    expect(run.code).toBe(1);
  });
});
