/**
 * `hookbus policy test` learns session facts from the merged decision, as a coordinator does: a
 * code policy's block is a refusal the Cedar rules see, a call it blocked is no call, and each
 * case starts with a fresh session even when the cases share a session key.
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { runPolicyTests } from "../../../src/policy-test/run.js";

const noRm = definePolicy({
  name: "no-rm",
  hooks: {
    before_tool_call(event) {
      const command = (event.params as { command?: unknown }).command;
      return typeof command === "string" && command.startsWith("rm ")
        ? { block: true, blockReason: "no rm" }
        : undefined;
    },
  },
});

const registry = {
  policies: [
    {
      name: "session-rules",
      kind: "cedar",
      cedar: `@id("three-refusals") @reason("3 refusals")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.session.refusals >= 3 };
@id("one-shell") @reason("one shell call")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "shell" && context.session.recent.m1.classCounts["shell"] >= 1 };`,
      hooks: ["before_tool_call"],
      priority: 50,
    },
    { name: "no-rm", hooks: ["before_tool_call"], priority: 40 },
  ],
};

const shell = (command: string) => ({
  hook: "before_tool_call" as const,
  event: { toolName: "Bash", params: { command } },
});
const read = { toolName: "Read", params: { file_path: "a.txt" } };

describe("policy test session facts", () => {
  it("counts a code policy's blocks as refusals, and not as calls", async () => {
    const results = await runPolicyTests([noRm], registry, [
      {
        file: "t.json",
        context: { sessionKey: "shared" },
        cases: [
          {
            name: "blocked rm calls are no shell calls",
            hook: "before_tool_call",
            history: [shell("rm a"), shell("rm b")],
            event: { toolName: "Bash", params: { command: "ls" } },
            expect: { outcome: "allow" },
          },
          {
            name: "the third refusal blocks the next call",
            hook: "before_tool_call",
            history: [shell("rm a"), shell("rm b"), shell("rm c")],
            event: read,
            expect: { outcome: "block", blockReasonIncludes: "3 refusals" },
          },
          {
            name: "a new case is a new session",
            hook: "before_tool_call",
            event: read,
            expect: { outcome: "allow" },
          },
        ],
      },
    ]);
    expect(results.map((r) => [r.name, r.status, r.error])).toEqual([
      ["blocked rm calls are no shell calls", "pass", undefined],
      ["the third refusal blocks the next call", "pass", undefined],
      ["a new case is a new session", "pass", undefined],
    ]);
  });
});
