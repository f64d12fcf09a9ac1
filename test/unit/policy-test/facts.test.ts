/**
 * `hookbus policy test` hands a code policy the call's facts, computed as the coordinator
 * computes them (src/policy/call-facts.ts) under the fixture's registry: its vocabulary and its
 * internal domains. A policy that decides by the facts passes its cases only if they arrive.
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/policy/index.js";
import { runPolicyTests } from "../../../src/policy-test/run.js";
import type { CaseSet } from "../../../src/policy-test/run.js";

const byFacts = definePolicy({
  name: "by-facts",
  hooks: {
    before_tool_call: (_event, _context, tools) => {
      const tool = tools.facts?.tools[0];
      if (tool === undefined) return { block: true, blockReason: "no facts" };
      if (tool.shell?.some((s) => s.deletesRecursively && s.targetsRoot))
        return { block: true, blockReason: `deletes / (${tool.class})` };
      if (tool.recipients.recipients.length > 0 && !tool.recipients.allInternal)
        return { block: true, blockReason: "external recipient" };
      return undefined;
    },
  },
});

const registry = {
  policies: [{ name: "by-facts", hooks: ["before_tool_call"], priority: 10 }],
  toolVocabulary: { names: { deploy: "shell" } },
  internalDomains: ["example.com"],
};

function set(cases: CaseSet["cases"]): CaseSet[] {
  return [{ file: "inline", context: {}, cases }];
}

describe("policy test: facts", () => {
  it("reach a code policy, classified by the fixture registry's vocabulary", async () => {
    const results = await runPolicyTests(
      [byFacts],
      registry,
      set([
        {
          name: "rm -rvf / under a tool the registry calls a shell",
          hook: "before_tool_call",
          event: { toolName: "deploy", params: { script: "rm -R -v -f /" } },
          expect: { outcome: "block", blockReason: "deletes / (shell)" },
        },
        {
          name: "an internal recipient (a subdomain) passes",
          hook: "before_tool_call",
          event: { toolName: "send_email", params: { to: "a@mail.example.com" } },
          expect: { outcome: "allow" },
        },
        {
          name: "a look-alike external recipient is refused",
          hook: "before_tool_call",
          event: { toolName: "send_email", params: { to: "a@example.com.attacker.net" } },
          expect: { outcome: "block", blockReason: "external recipient" },
        },
      ]),
    );
    expect(results.map((r) => [r.name, r.status, r.mismatches])).toEqual([
      ["rm -rvf / under a tool the registry calls a shell", "pass", []],
      ["an internal recipient (a subdomain) passes", "pass", []],
      ["a look-alike external recipient is refused", "pass", []],
    ]);
  });
});
