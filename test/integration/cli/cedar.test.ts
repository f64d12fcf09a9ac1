/**
 * Cedar at the command line: `policy schema --cedar` prints the schema generated from the hook
 * catalog, `policy validate` type-checks against it, and `registry apply` refuses an ill-typed
 * policy before storing anything (and stores the .cedar text of a good one).
 */
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";

const nats = useNatsServer();
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const library = fileURLToPath(new URL("../../../policies/library/", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "hookbus-cli-cedar-"));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

async function hookbus(args: string[]) {
  const child = startChild([cli, ...args], { HOOKBUS_DEBUG: "" });
  const code = await child.exited;
  return { code, stdout: child.output(), stderr: child.errors() };
}

const GOOD = `@id("no-rm") forbid (principal, action == Action::"before_tool_call", resource)
when { context.call has command && context.call.command like "*rm -rf*" };`;
// before_tool_call has no `content`: before_response_emit does.
const ILL_TYPED = `@id("reads-content") forbid (principal, action == Action::"before_tool_call", resource)
when { context.content like "*secret*" };`;

const registry = (name: string, source: string) =>
  file(
    name,
    JSON.stringify({
      policies: [
        { name: "rules", kind: "cedar", source, hooks: ["before_tool_call"], priority: 1 },
      ],
    }),
  );

describe("hookbus policy and registry with Cedar", { timeout: 120_000 }, () => {
  it("prints the schema generated from the hook catalog", async () => {
    const run = await hookbus(["policy", "schema", "--cedar"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("action before_tool_call appliesTo");
    expect(run.stdout).toContain("type SessionFacts");
    // The secret facts the library's rules read (docs/cedar.md).
    expect(run.stdout).toContain("secrets: Set<String>");
    expect(run.stdout).toContain("resultSecrets: Set<String>");
    expect(run.stdout).toContain("contentSecrets: Set<String>");
  });

  it("validate accepts a well-typed set and refuses one that reads a field its hook lacks", async () => {
    const good = await hookbus(["policy", "validate", file("good.cedar", GOOD)]);
    expect(good.stdout).toContain("is valid: 1 Cedar policies");
    expect(good.code).toBe(0);
    const bad = await hookbus(["policy", "validate", file("bad.cedar", ILL_TYPED)]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^HOOKBUS_INVALID_CEDAR: /);
    expect(bad.stderr).toContain("reads-content");
    expect(bad.stderr).toContain("attribute `content`");
  });

  it("registry apply refuses an ill-typed set and stores nothing; a good one is stored with its text", async () => {
    file("bad.cedar", ILL_TYPED);
    file("good.cedar", GOOD);
    const connection = ["--server", nats.url(), "--namespace", uniqueNamespace("cedar-cli")];
    const refused = await hookbus([
      "registry",
      "apply",
      registry("bad.json", "bad.cedar"),
      ...connection,
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^HOOKBUS_INVALID_CEDAR: /);
    const applied = await hookbus([
      "registry",
      "apply",
      registry("good.json", "good.cedar"),
      "--json",
      ...connection,
    ]);
    expect(applied.code, applied.stderr).toBe(0);
    const stored = JSON.parse(applied.stdout) as {
      revision: number;
      policies: { cedar?: string }[];
    };
    expect(stored.revision).toBe(1); // the refused apply stored no revision
    expect(stored.policies[0]?.cedar).toBe(GOOD);
  });

  it("the shipped policy library validates and passes its policy tests", async () => {
    const files = readdirSync(library)
      .filter((f) => f.endsWith(".cedar"))
      .map((f) => join(library, f));
    expect(files.length).toBeGreaterThanOrEqual(7);
    const validate = await hookbus([
      "policy",
      "validate",
      ...files,
      join(library, "registry.json"),
    ]);
    expect(validate.stderr).toBe("");
    expect(validate.code).toBe(0);
    expect(validate.stdout.trim().split("\n")).toHaveLength(files.length + 1);

    const fixture = join(library, "library.policy-test.json");
    const run = await hookbus(["policy", "test", fixture, "--json"]);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { name?: string; status?: string; summary?: unknown });
    const summary = lines.pop();
    expect(lines.filter((l) => l.status !== "pass")).toEqual([]);
    expect(summary).toEqual({ summary: { passed: lines.length, failed: 0, errors: 0 } });
    expect(run.code).toBe(0);
  });
});
