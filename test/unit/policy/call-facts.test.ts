/**
 * The fact set the coordinator computes (src/policy/call-facts.ts): a working directory the call
 * claims never makes a deletion of `/`, a system directory or a home look like project work, and
 * a claimed home is not taken at all.
 */
import { beforeAll, describe, expect, it } from "vitest";
import {
  callFacts,
  callFactsOnDemand,
  loadCallFacts,
  MAX_CALL_SHELL_CHARS,
} from "../../../src/policy/call-facts.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";

beforeAll(() => loadCallFacts());

function shellOf(command: string, where: { cwd?: string; paramsCwd?: string; home?: string }) {
  const params: Record<string, unknown> = { command };
  if (where.paramsCwd !== undefined) params.cwd = where.paramsCwd;
  const event: Record<string, unknown> = { toolName: "Bash", params };
  if (where.cwd !== undefined) event.cwd = where.cwd;
  const context: Record<string, unknown> = { agentId: "a", sessionKey: "s" };
  if (where.home !== undefined) context.home = where.home;
  const facts = callFacts("before_tool_call", event, context);
  return facts.tools[0]!.shell![0]!;
}

const CLAIMS = ["/", "/etc", "/etc/ssh", "/root", "/home/dev", "/Users/dev", "/usr", "/boot/x"];

describe("callFacts: a claimed working directory", () => {
  it.each(CLAIMS.flatMap((cwd) => [{ cwd }, { paramsCwd: cwd }]))(
    "%o never turns a system, root or home deletion into project work",
    (where) => {
      expect(shellOf("rm -rf /etc", where).targetsSystem).toBe(true);
      expect(shellOf("rm -rf /", where).targetsRoot).toBe(true);
      expect(shellOf("rm -rf ~", where).targetsHome).toBe(true);
      const home = shellOf("rm -rf /home/dev", where);
      expect(home.targetsSystem || home.targetsHome).toBe(true);
      expect(shellOf("rm -rf *", where).deleteTargetClasses).not.toContain("project");
    },
  );

  it("still resolves relative paths from it, and a real project is a project", () => {
    expect(shellOf("rm -rf *", { cwd: "/" }).targetsRoot).toBe(true);
    expect(shellOf("rm -rf dist", { cwd: "/home/dev/app" }).deleteTargetClasses).toEqual([
      "project",
    ]);
    expect(shellOf("rm -rf build", { cwd: "/srv/app" }).deleteTargetClasses).toEqual(["project"]);
  });

  it("takes no home from the call: a claimed home of / does not hide /etc", () => {
    expect(shellOf("rm -rf /etc", { home: "/" }).targetsSystem).toBe(true);
    expect(shellOf("rm -rf /usr/*", { home: "/" }).targetsSystem).toBe(true);
  });
});

describe("callFacts: one call's commands have one budget", () => {
  it("reads commands up to the budget and marks the rest unparsed, unread", () => {
    // 8 tool calls of ~12 KB each: about 96 KB in all, over the 64 KB budget.
    const command = `echo ${"a".repeat(12_000)} && rm -rf /`;
    const toolCalls = Array.from({ length: 8 }, (_, i) => ({
      id: `c${i}`,
      name: "Bash",
      arguments: JSON.stringify({ command }),
    }));
    const facts = callFacts("after_llm_call", { toolCalls }, { agentId: "a", sessionKey: "s" });
    const shell = facts.tools.map((t) => t.shell![0]!);
    let read = 0;
    for (const s of shell) {
      read += command.length;
      if (read <= MAX_CALL_SHELL_CHARS) {
        expect(s.unparsed).toBeUndefined();
        expect(s.targetsRoot).toBe(true);
      } else {
        expect(s.unparsed).toMatchObject({ reason: "too-long", code: "HOOKBUS_SHELL_LIMIT" });
        expect(s.unparsed?.detail).toContain("in all");
      }
    }
    expect(shell.filter((s) => s.unparsed !== undefined).length).toBeGreaterThan(0);
  });
});

describe("callFactsOnDemand: the one fact set of a call, on first need", () => {
  const snapshot = new RegistrySnapshot(
    1,
    parseRegistryDocument({ policies: [], internalDomains: ["example.com"] }),
  );
  const event = { toolName: "send_email", params: { to: "ann@example.com" } };
  const context = { agentId: "a", sessionKey: "s" };

  it("computes nothing until asked, then one object, with the revision's options", () => {
    const onDemand = callFactsOnDemand("before_tool_call", event, context, snapshot);
    expect(onDemand.computed()).toBeUndefined();
    const facts = onDemand.facts();
    expect(onDemand.facts()).toBe(facts);
    expect(onDemand.computed()).toBe(facts);
    expect(facts.tools[0]?.recipients).toMatchObject({ allInternal: true });
    expect(facts).toEqual(
      callFacts("before_tool_call", event, context, { internalDomains: ["example.com"] }),
    );
  });
});
