/**
 * Issue 30, item 7: `policy validate` and `registry apply` refuse what Cedar accepts but hookbus
 * would misread (a misspelt annotation, class or taint label; @approval where no person can be
 * asked; a rule for a hook its entry does not list), and every syntax and type error names its
 * policy, line and column.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";

const nats = useNatsServer();
const dir = mkdtempSync(join(tmpdir(), "hookbus-cedar-lint-"));
let files = 0;

function cedarFile(text: string): string {
  const path = join(dir, `set-${++files}.cedar`);
  writeFileSync(path, text);
  return path;
}

function registryFile(text: string, hooks: string[]): string {
  const source = cedarFile(text);
  const path = join(dir, `registry-${files}.json`);
  const entry = { name: "rules", kind: "cedar", source, hooks, priority: 1 };
  writeFileSync(path, JSON.stringify({ policies: [entry] }));
  return path;
}

async function hookbus(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  let code: number;
  try {
    code = await main(args, {
      print: (line) => (out += `${line}\n`),
      error: (line) => (err += `${line}\n`),
    });
  } catch (error) {
    // The CLI's entry point prints a thrown coded error as `CODE: message`.
    const coded = error as { code?: string; message: string };
    err += `${coded.code}: ${coded.message}\n`;
    code = 1;
  }
  return { code, out, err };
}

const validate = (path: string) => hookbus("policy", "validate", path);

const TOOL = 'forbid (principal, action == Action::"before_tool_call", resource is Tool)';

describe("the Cedar validator catches what people get wrong", { timeout: 60_000 }, () => {
  it("refuses a misspelt annotation, naming the policy, line, column and the likely word", async () => {
    const run = await validate(
      cedarFile(
        `@id("ask")\n@aproval("Send this?")\n${TOOL}\nwhen { resource.class == "send-message" };`,
      ),
    );
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/^HOOKBUS_INVALID_CEDAR: /);
    expect(run.err).toContain("ask: line 2, column 1: @aproval is not an annotation");
    expect(run.err).toContain("did you mean @approval?");
    const reson = await validate(cedarFile(`@id("why") @reson("no") ${TOOL};`));
    expect(reson.err).toContain("why: line 1, column 12: @reson");
    expect(reson.err).toContain("did you mean @reason?");
  });

  it("refuses a tool class or taint label that does not exist, in every way it is compared", async () => {
    const run = await validate(
      cedarFile(
        [
          `@id("a") ${TOOL} when { resource.class == "shel" };`,
          `@id("b") ${TOOL} when { ["shell", "file-wrte"].contains(resource.class) };`,
          `@id("c") ${TOOL} when { context.session.taint.contains("mccp") };`,
          `@id("d") ${TOOL} when { context.session.classesCalled.containsAny(["web-fech"]) };`,
          `@id("e") ${TOOL} when { resource.class != "browse" };`,
        ].join("\n"),
      ),
    );
    expect(run.code).toBe(1);
    for (const [id, line, bad, near] of [
      ["a", 1, "shel", "shell"],
      ["b", 2, "file-wrte", "file-write"],
      ["c", 3, "mccp", "mcp"],
      ["d", 4, "web-fech", "web-fetch"],
      ["e", 5, "browse", "browser"],
    ] as const) {
      expect(run.err).toContain(`${id}: line ${line}, column`);
      expect(run.err).toContain(`"${bad}" is not a`);
      expect(run.err).toContain(`did you mean "${near}"?`);
    }
  });

  it("accepts the real values, and refuses nothing in a correct set", async () => {
    const run = await validate(
      cedarFile(
        [
          `@id("ok") @reason("no shell after the web") @severity("high") @approval("Run it?")`,
          `${TOOL} when { resource.class == "shell" && context.session.taint.contains("mcp") &&`,
          `  ["web-fetch", "browser"].contains(resource.class) };`,
        ].join("\n"),
      ),
    );
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
  });

  it("refuses @approval on a rule for a hook that cannot ask a person", async () => {
    const run = await validate(
      cedarFile(
        `@id("ask-llm") @approval("Call the model?")\nforbid (principal, action in [Action::"after_llm_call", Action::"before_tool_call"], resource);`,
      ),
    );
    expect(run.code).toBe(1);
    expect(run.err).toContain("ask-llm: line 1, column 16: @approval on a rule for after_llm_call");
    // A rule for every hook: what it applies to is the entry's hooks.
    const everyHook = `@id("all") @approval("Sure?") forbid (principal, action, resource);`;
    expect((await validate(cedarFile(everyHook))).code).toBe(0);
    const inEntry = await validate(
      registryFile(everyHook, ["before_tool_call", "before_llm_call"]),
    );
    expect(inEntry.code).toBe(1);
    expect(inEntry.err).toContain("@approval on a rule for before_llm_call");
    expect((await validate(registryFile(everyHook, ["before_tool_call"]))).code).toBe(0);
  });

  it("registry apply refuses a rule for hooks its entry does not list, and stores nothing", async () => {
    const connection = ["--server", nats.url(), "--namespace", uniqueNamespace("cedar-lint")];
    const never = `@id("emit") forbid (principal, action == Action::"before_response_emit", resource);`;
    const refused = await hookbus(
      "registry",
      "apply",
      registryFile(`${never}\n@id("tool") ${TOOL};`, ["before_tool_call"]),
      ...connection,
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("emit: line 1, column");
    expect(refused.err).toContain("before_response_emit, which the entry does not list");
    const applied = await hookbus(
      "registry",
      "apply",
      registryFile(never, ["before_response_emit"]),
      "--json",
      ...connection,
    );
    expect(applied.code, applied.err).toBe(0);
    expect((JSON.parse(applied.out) as { revision: number }).revision).toBe(1);
  });

  it("names the policy, line and column of syntax and type errors", async () => {
    const syntax = await validate(
      cedarFile(`@id("fine") ${TOOL};\n\n@id("broken")\n${TOOL}\nwhen { context.x = };`),
    );
    expect(syntax.code).toBe(1);
    expect(syntax.err).toMatch(/broken: line 5, column \d+: unexpected token/);
    const typed = await validate(
      cedarFile(`@id("first") ${TOOL};\n@id("typed") ${TOOL}\n  when { resource.nope == 1 };`),
    );
    expect(typed.code).toBe(1);
    expect(typed.err).toContain("typed: line 3, column 10: for policy `typed`, attribute `nope`");
  });
});
