/**
 * One-way block latch and block-reason ownership, for every hook whose verdict can block.
 */
import { describe, expect, it } from "vitest";
import { type ModifyingHookName } from "../../../src/index.js";
import { ok, looseMerge as merge } from "../../support/merge.js";

/** Hooks whose verdict has `block`, each with an event and a verdict that modifies something. */
const blockable: Array<{
  hook: ModifyingHookName;
  event: unknown;
  modify: unknown;
  field: string;
}> = [
  {
    hook: "before_llm_call",
    event: { messages: [{ role: "user", content: "hi" }], tools: [{ name: "read" }] },
    modify: { messages: [], tools: [] },
    field: "messages",
  },
  {
    hook: "after_llm_call",
    event: { toolCalls: [{ id: "c1", name: "read" }] },
    modify: { toolCalls: [] },
    field: "toolCalls",
  },
  {
    hook: "before_tool_call",
    event: { toolName: "exec", params: { cmd: "rm -rf /" } },
    modify: { params: { cmd: "true" } },
    field: "params",
  },
  {
    hook: "before_tool_result",
    event: { toolName: "read", params: {}, result: "x", isError: false },
    modify: { content: "clean" },
    field: "content",
  },
  {
    hook: "before_response_emit",
    event: { content: "bye", allContent: ["hi", "bye"] },
    modify: { content: "BYE", allContent: ["HI", "BYE"] },
    field: "content",
  },
];

describe.each(blockable.map((row) => [row.hook, row] as const))(
  "block latch: %s",
  (_hook, { hook, event, modify, field }) => {
    it("blocks when a policy returns block: true", () => {
      const result = merge(hook, event, [ok("guard", 1, { block: true, blockReason: "nope" })]);
      expect(result.decision).toStrictEqual({
        outcome: "block",
        blockReason: "nope",
        blockedBy: "guard",
        decidedBy: { block: ["guard"] },
      });
    });

    it("stays blocked when a lower-priority policy says block: false", () => {
      const result = merge(hook, event, [
        ok("guard", 9, { block: true, blockReason: "nope" }),
        ok("unblocker", 1, { block: false, blockReason: "actually fine" }),
      ]);
      expect(result.decision.outcome).toBe("block");
      expect(result.decision.blockedBy).toBe("guard");
      expect(result.decision.blockReason).toBe("nope");
    });

    it("stays blocked when a higher-priority policy says block: false", () => {
      const result = merge(hook, event, [
        ok("unblocker", 9, { block: false }),
        ok("guard", 1, { block: true, blockReason: "nope" }),
      ]);
      expect(result.decision.outcome).toBe("block");
      expect(result.decision.blockedBy).toBe("guard");
    });

    it("treats block: false alone as no opinion (allow)", () => {
      const result = merge(hook, event, [ok("p", 1, { block: false })]);
      expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
    });

    it("gives the reason to the first (highest-priority) blocker", () => {
      const result = merge(hook, event, [
        ok("second", 5, { block: true, blockReason: "second reason" }),
        ok("first", 6, { block: true, blockReason: "first reason" }),
        ok("third", 1, { block: true, blockReason: "third reason" }),
      ]);
      expect(result.decision.blockReason).toBe("first reason");
      expect(result.decision.blockedBy).toBe("first");
      expect(result.decision.decidedBy).toEqual({ block: ["first"] });
    });

    it("does not give the reason to a higher policy that set blockReason without block", () => {
      const result = merge(hook, event, [
        ok("talker", 9, { blockReason: "I would like to rewrite the reason" }),
        ok("guard", 1, { block: true, blockReason: "real reason" }),
      ]);
      expect(result.decision.blockReason).toBe("real reason");
      expect(result.decision.blockedBy).toBe("guard");
    });

    it("does not block on a blockReason without block", () => {
      const result = merge(hook, event, [ok("talker", 1, { blockReason: "hmm" })]);
      expect(result.decision.outcome).toBe("allow");
      expect("blockReason" in result.decision).toBe(false);
    });

    it("gives a block without a reason a default reason that names the policy", () => {
      const result = merge(hook, event, [ok("silent-guard", 1, { block: true })]);
      expect(result.decision.outcome).toBe("block");
      expect(result.decision.blockReason).toContain('"silent-guard"');
      expect(result.decision.blockedBy).toBe("silent-guard");
    });

    it("drops every modified field from a blocked decision, even those set by higher policies", () => {
      const result = merge(hook, event, [
        ok("modifier", 9, modify),
        ok("guard", 1, { block: true, blockReason: "stop" }),
      ]);
      expect(result.decision).toStrictEqual({
        outcome: "block",
        blockReason: "stop",
        blockedBy: "guard",
        decidedBy: { block: ["guard"] },
      });
      expect(field in result.decision).toBe(false);
    });

    it("lets a policy that blocks and modifies in one verdict block", () => {
      const result = merge(hook, event, [
        ok("both", 1, { ...(modify as object), block: true, blockReason: "both" }),
      ]);
      expect(result.decision.outcome).toBe("block");
      expect(field in result.decision).toBe(false);
    });
  },
);
