/**
 * What mergeOutcomes returns: the enforced `decision` (outcome, fields, decidedBy), `policies[]`
 * in merge order, and `shadow` when shadow policies answered.
 */
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  modifyingHooks,
  type HookEvent,
  type ModifyingHookName,
  type PolicyOutcomeInput,
} from "../../../src/index.js";
import { checkedMerge, ok } from "../../support/merge.js";

function merge<H extends ModifyingHookName>(
  hook: H,
  event: HookEvent<H>,
  outcomes: PolicyOutcomeInput[],
) {
  const result = checkedMerge(hook, event, outcomes);
  const schema = modifyingHooks[hook].decision as z.ZodType;
  if (result.shadow !== undefined) {
    expect(schema.safeParse(result.shadow.decision).error?.issues ?? []).toEqual([]);
  }
  return result;
}

const llmEvent: HookEvent<"before_llm_call"> = {
  messages: [{ role: "user", content: "hi" }],
  systemPrompt: "s",
  tools: [{ name: "read" }, { name: "write" }, { name: "exec" }],
};

describe("decision outcome", () => {
  it("is allow with an empty decidedBy when there are no outcomes", () => {
    expect(merge("before_llm_call", llmEvent, []).decision).toStrictEqual({
      outcome: "allow",
      decidedBy: {},
    });
  });

  it("is allow when every policy had no opinion", () => {
    const result = merge("before_llm_call", llmEvent, [ok("a", 1, {}), ok("b", 2, null)]);
    expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
  });

  it("is modify when any field is set", () => {
    expect(
      merge("before_llm_call", llmEvent, [ok("a", 1, { systemPrompt: "x" })]).decision.outcome,
    ).toBe("modify");
  });

  it("is block when any policy blocks", () => {
    expect(merge("before_llm_call", llmEvent, [ok("a", 1, { block: true })]).decision.outcome).toBe(
      "block",
    );
  });

  it("is reply when a before_agent_reply policy replies", () => {
    expect(
      merge("before_agent_reply", { cleanedBody: "x" }, [ok("a", 1, { reply: { text: "r" } })])
        .decision.outcome,
    ).toBe("reply");
  });
});

describe("decidedBy", () => {
  it("names, per field, the policies that decided it, in merge order", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("tools-a", 4, { tools: [{ name: "read" }, { name: "write" }] }),
      ok("prompt", 3, { systemPrompt: "p" }),
      ok("tools-b", 2, { tools: [{ name: "read" }], systemPrompt: "ignored" }),
      ok("history", 1, { messages: [] }),
    ]);
    expect(result.decision.decidedBy).toStrictEqual({
      tools: ["tools-a", "tools-b"],
      systemPrompt: ["prompt"],
      messages: ["history"],
    });
  });

  it("names only the blocker when the decision is a block", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("prompt", 3, { systemPrompt: "p" }),
      ok("guard", 2, { block: true }),
      ok("guard-2", 1, { block: true }),
    ]);
    expect(result.decision.decidedBy).toStrictEqual({ block: ["guard"] });
  });
});

describe("policies[]", () => {
  it("lists every outcome in merge order with its status, failure mode and effect", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("applied", 5, { systemPrompt: "x" }, { version: "1.2.0", latencyMs: 3 }),
      ok("silent", 4, null),
      { policy: "flaky", priority: 3, status: "timeout", failMode: "fail-open" },
      { policy: "shadowed", priority: 2, status: "ok", mode: "shadow", verdict: {} },
      {
        policy: "crashed",
        priority: 1,
        status: "error",
        failMode: "fail-closed",
        error: { code: "E", message: "boom", stack: "ignored" },
      },
    ]);
    expect(result.policies).toStrictEqual([
      {
        policy: "applied",
        version: "1.2.0",
        priority: 5,
        mode: "enforce",
        status: "ok",
        failMode: "fail-open",
        effect: "applied",
      },
      {
        policy: "silent",
        priority: 4,
        mode: "enforce",
        status: "ok",
        failMode: "fail-open",
        effect: "no-opinion",
      },
      {
        policy: "flaky",
        priority: 3,
        mode: "enforce",
        status: "timeout",
        failMode: "fail-open",
        effect: "failed-open",
      },
      {
        policy: "shadowed",
        priority: 2,
        mode: "shadow",
        status: "ok",
        failMode: "fail-open",
        effect: "applied",
      },
      {
        policy: "crashed",
        priority: 1,
        mode: "enforce",
        status: "error",
        failMode: "fail-closed",
        effect: "failed-closed",
        error: { code: "E", message: "boom" },
      },
    ]);
  });

  it("does not mutate the event or the outcomes it was given", () => {
    const event = structuredClone(llmEvent);
    const outcomes: PolicyOutcomeInput[] = [
      ok("a", 2, { tools: [{ name: "read" }], messages: [{ role: "user", content: "x" }] }),
      ok("b", 1, { tools: [] }),
      { policy: "c", priority: 0, status: "error" },
    ];
    const before = structuredClone({ event, outcomes });
    merge("before_llm_call", event, outcomes);
    expect({ event, outcomes }).toStrictEqual(before);
  });
});

describe("shadow", () => {
  it("is absent when no shadow outcome was given", () => {
    const result = merge("before_llm_call", llmEvent, [ok("a", 1, { block: true })]);
    expect("shadow" in result).toBe(false);
  });

  it("leaves a shadow block out of the decision but puts it in shadow.decision", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("enforced", 1, { systemPrompt: "x" }),
      ok("candidate", 9, { block: true, blockReason: "would block" }, { mode: "shadow" }),
    ]);
    expect(result.decision).toStrictEqual({
      outcome: "modify",
      systemPrompt: "x",
      decidedBy: { systemPrompt: ["enforced"] },
    });
    expect(result.shadow).toStrictEqual({
      decision: {
        outcome: "block",
        blockReason: "would block",
        blockedBy: "candidate",
        decidedBy: { block: ["candidate"] },
      },
      changed: true,
    });
  });

  it("shows a shadow policy narrowing tools only in shadow.decision", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("candidate", 1, { tools: [{ name: "read" }] }, { mode: "shadow" }),
    ]);
    expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
    expect(result.shadow?.decision.tools).toEqual([{ name: "read" }]);
    expect(result.shadow?.changed).toBe(true);
  });

  it("reports changed: false when the shadow policy had no opinion", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("enforced", 1, { systemPrompt: "x" }),
      ok("candidate", 2, null, { mode: "shadow" }),
    ]);
    expect(result.shadow).toStrictEqual({ decision: result.decision, changed: false });
  });

  it("reports changed: false when the shadow policy decides the same thing (only decidedBy differs)", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("history", 2, { messages: [] }),
      ok("prompt", 1, { systemPrompt: "x" }),
      // Higher priority: with it enforced, systemPrompt is written first, by another policy.
      ok("candidate", 9, { systemPrompt: "x" }, { mode: "shadow" }),
    ]);
    expect(result.shadow?.decision.decidedBy).toStrictEqual({
      systemPrompt: ["candidate"],
      messages: ["history"],
    });
    expect(result.shadow?.changed).toBe(false);
  });

  it("reports changed: false when a shadow blocker would only change who blocked, not why", () => {
    const result = merge("before_tool_call", { toolName: "exec", params: {} }, [
      ok("guard", 1, { block: true, blockReason: "no exec" }),
      ok("candidate", 9, { block: true, blockReason: "no exec" }, { mode: "shadow" }),
    ]);
    expect(result.shadow?.decision.blockedBy).toBe("candidate");
    expect(result.shadow?.changed).toBe(false);
  });

  it("reports changed: true when the shadow policy changes a value", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("prompt", 1, { systemPrompt: "x" }),
      ok("candidate", 9, { systemPrompt: "y" }, { mode: "shadow" }),
    ]);
    expect(result.decision.systemPrompt).toBe("x");
    expect(result.shadow?.decision.systemPrompt).toBe("y");
    expect(result.shadow?.changed).toBe(true);
  });

  it("keeps a failing fail-closed shadow policy out of enforcement but blocks in shadow.decision", () => {
    const result = merge("before_tool_call", { toolName: "exec", params: {} }, [
      { policy: "candidate", priority: 1, status: "timeout", mode: "shadow" },
    ]);
    expect(result.decision.outcome).toBe("allow");
    expect(result.shadow?.decision.outcome).toBe("block");
    expect(result.shadow?.decision.blockReason).toContain('"candidate"');
    expect(result.policies[0]).toMatchObject({ mode: "shadow", effect: "failed-closed" });
  });
});
