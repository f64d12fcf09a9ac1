/**
 * Re-deciding one recorded call: the input is validated once for all the hook's policies, and a
 * recorded input that fails the hook's schema is refused by every policy under its own name, as
 * each worker would refuse it live.
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";
import { buildCandidates } from "../../../src/replay/candidates.js";
import { reevaluate } from "../../../src/replay/evaluate.js";

const seen: unknown[] = [];
const policies = ["first", "second"].map((name) =>
  definePolicy({
    name,
    version: "1",
    hooks: {
      before_tool_call(event) {
        seen.push(event);
        return event.toolName === "exec"
          ? { block: true, blockReason: `${name} says no` }
          : undefined;
      },
    },
  }),
);
const registry = {
  policies: [
    { name: "first", hooks: ["before_tool_call"], priority: 20 },
    { name: "second", hooks: ["before_tool_call"], priority: 10, failMode: "fail-open" },
  ],
};
const candidates = buildCandidates(policies, registry).forHook("before_tool_call");
const context = { agentId: "a", sessionKey: "s", toolName: "exec", toolCallId: "t1" };

describe("reevaluate", () => {
  it("hands every policy the recorded input and merges their verdicts", async () => {
    seen.length = 0;
    const event = { toolName: "exec", toolCallId: "t1", params: { command: "ls" } };
    const { result, outcomes } = await reevaluate(
      { callId: "c1", hook: "before_tool_call", event, context },
      candidates,
      new MemorySessionStateStore(),
    );
    expect(seen).toEqual([event, event]);
    expect(result.decision).toMatchObject({ outcome: "block", blockedBy: "first" });
    expect(outcomes.map((o) => [o.policy, o.status, "latencyMs" in o])).toEqual([
      ["first", "ok", false],
      ["second", "ok", false],
    ]);
  });

  it("refuses an input that fails the hook's schema in every policy, each under its own name", async () => {
    seen.length = 0;
    const { result, outcomes } = await reevaluate(
      { callId: "c2", hook: "before_tool_call", event: { toolName: 42 }, context },
      candidates,
      new MemorySessionStateStore(),
    );
    expect(seen).toEqual([]);
    expect(outcomes.map((o) => [o.policy, o.status, o.effect, o.error?.code])).toEqual([
      ["first", "error", "failed-closed", "HOOKBUS_INVALID_EVENT"],
      ["second", "error", "failed-open", "HOOKBUS_INVALID_EVENT"],
    ]);
    expect(result.decision.outcome).toBe("block");
  });
});
