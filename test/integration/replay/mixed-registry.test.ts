/**
 * A mixed registry (a Cedar set and a code policy on a worker) decides a session on a real NATS
 * server; replaying the recorded session under the same registry reports no change. The Cedar
 * rules read session facts that a code policy's blocks change (calls counted, refusals), so the
 * replay must learn them from the merged decision as the live coordinator did.
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import type { DecisionRecord, LogRecord } from "../../../src/log/record.js";
import { replay } from "../../../src/replay/replay.js";
import type { ReplayResult } from "../../../src/replay/types.js";
import { startPipeline, until, useNatsServer } from "../pipeline/harness.js";

const nats = useNatsServer();

const CEDAR = `
@id("shell-budget") @reason("at most 3 shell calls per session")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "shell" && context.session.classCounts["shell"] >= 3 };

@id("three-strikes") @reason("this session has had 3 refusals")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { context.session.refusals >= 3 };
`;

/** A code policy: no `rm`, whatever Cedar says. */
const noRm = definePolicy({
  name: "no-rm",
  hooks: {
    before_tool_call(event) {
      const command = (event.params as { command?: unknown }).command;
      if (typeof command === "string" && /\brm\b/.test(command))
        return { block: true, blockReason: "no rm" };
      return undefined;
    },
  },
});

const registry = {
  policies: [
    {
      name: "session-rules",
      kind: "cedar" as const,
      cedar: CEDAR,
      hooks: ["before_tool_call" as const],
      priority: 50,
      failMode: "fail-closed" as const,
    },
    {
      name: "no-rm",
      hooks: ["before_tool_call" as const],
      priority: 40,
      timeoutMs: 5000,
      failMode: "fail-closed" as const,
    },
  ],
};

const ctx = { agentId: "mixed-agent", sessionKey: "s-mixed", runId: "r-1" };
const shell = (id: string, command: string) => ({
  toolName: "Bash",
  toolCallId: id,
  params: { command },
});

describe("replay of a mixed Cedar and code registry", () => {
  it("reports no change for the unchanged registry, and learns refusals from code blocks", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [noRm] });
    const steps: [string, string, string][] = [
      ["c1", "ls", "allow"],
      ["c2", "rm -rf build", "block"], // the worker blocks: Cedar allowed, and it is no call
      ["c3", "ls src", "allow"],
      ["c4", "ls test", "allow"], // two shell calls so far: within the budget
      ["c5", "rm a", "block"],
      ["c6", "rm b", "block"], // the third refusal, all by the code policy
      ["c7", "echo hi", "block"], // three-strikes (Cedar) blocks what is otherwise allowed
    ];
    for (const [id, command, outcome] of steps) {
      const decision = await p.client.decide("before_tool_call", ctx, shell(id, command));
      expect({ id, outcome: decision.outcome }).toEqual({ id, outcome });
    }
    const records = await until(
      async () => {
        const log = (await p.readLog()).map((r) => r.record);
        const decisions = log.filter((r): r is DecisionRecord => r.kind === "decision");
        return decisions.length >= steps.length ? log : undefined;
      },
      10_000,
      "every decision record",
    );
    const results = await replayed(records);
    expect(results.map((r) => r.recorded.outcome)).toEqual(steps.map(([, , outcome]) => outcome));
    expect(results.at(-1)?.recorded).toMatchObject({ blockedBy: "session-rules" });
    expect(results.map((r) => r.status)).toEqual(steps.map(() => "unchanged"));
  });
});

async function replayed(records: LogRecord[]): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const result of replay({ policies: [noRm], registry, records })) results.push(result);
  return results;
}
