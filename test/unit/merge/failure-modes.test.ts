/**
 * A policy that errors, times out, returns an invalid verdict or has no live worker is a
 * failure; its failure mode decides: fail-closed blocks naming the policy, fail-open is ignored.
 */
import { describe, expect, it } from "vitest";
import {
  MODIFYING_HOOK_NAMES,
  modifyingHooks,
  type ModifyingHookName,
  type PolicyStatus,
} from "../../../src/index.js";
import { ok, looseMerge as merge } from "../../support/merge.js";

const events: Record<ModifyingHookName, unknown> = {
  before_agent_reply: { cleanedBody: "hi" },
  before_llm_call: { messages: [{ role: "user", content: "hi" }], systemPrompt: "s" },
  after_llm_call: { toolCalls: [{ id: "c1", name: "read" }] },
  before_tool_call: { toolName: "exec", params: { cmd: "ls" } },
  before_tool_result: { toolName: "read", params: {}, result: "r", isError: false },
  before_response_emit: { content: "bye", allContent: ["bye"] },
};

/** A verdict each hook accepts that modifies something. */
const modifying: Record<ModifyingHookName, unknown> = {
  before_agent_reply: { reply: { text: "canned" } },
  before_llm_call: { systemPrompt: "" },
  after_llm_call: { toolCalls: [{ id: "c1" }] },
  before_tool_call: { params: {} },
  before_tool_result: { content: "clean" },
  before_response_emit: { content: "BYE" },
};

const failureStatuses: PolicyStatus[] = ["error", "timeout", "invalid", "unavailable"];

describe.each(failureStatuses)("status %s", (status) => {
  it.each(MODIFYING_HOOK_NAMES)(
    "blocks under fail-closed with a reason naming the policy (%s)",
    (hook) => {
      const result = merge(hook, events[hook], [
        ok("helper", 9, modifying[hook]),
        {
          policy: "secret-scanner",
          priority: 1,
          status,
          failMode: "fail-closed",
          error: { code: "E_SCAN", message: "scanner crashed" },
        },
      ]);
      expect(result.decision.outcome).toBe("block");
      expect(result.decision.blockedBy).toBe("secret-scanner");
      expect(result.decision.blockReason).toContain('"secret-scanner"');
      expect(result.decision.blockReason).toContain(status);
      expect(result.decision.blockReason).toContain("scanner crashed");
      expect(result.policies[1]).toMatchObject({
        policy: "secret-scanner",
        status,
        failMode: "fail-closed",
        effect: "failed-closed",
        error: { code: "E_SCAN", message: "scanner crashed" },
      });
    },
  );

  it.each(MODIFYING_HOOK_NAMES)("is ignored under fail-open (%s)", (hook) => {
    const alone = merge(hook, events[hook], [ok("helper", 9, modifying[hook])]);
    const result = merge(hook, events[hook], [
      ok("helper", 9, modifying[hook]),
      { policy: "flaky", priority: 10, status, failMode: "fail-open" },
    ]);
    expect(result.decision).toStrictEqual(alone.decision);
    expect(result.decision.outcome).not.toBe("block");
    expect(result.policies[0]).toMatchObject({
      policy: "flaky",
      status,
      failMode: "fail-open",
      effect: "failed-open",
    });
  });
});

describe("per-hook default failure modes", () => {
  const expected: Record<ModifyingHookName, "fail-open" | "fail-closed"> = {
    after_llm_call: "fail-closed",
    before_tool_call: "fail-closed",
    before_tool_result: "fail-closed",
    before_response_emit: "fail-closed",
    before_agent_reply: "fail-open",
    before_llm_call: "fail-open",
  };

  it("declares the documented default for every modifying hook", () => {
    expect(
      Object.fromEntries(MODIFYING_HOOK_NAMES.map((h) => [h, modifyingHooks[h].defaultFailMode])),
    ).toEqual(expected);
  });

  it.each(Object.entries(expected) as Array<[ModifyingHookName, string]>)(
    "%s applies %s to a failure whose outcome names no failure mode",
    (hook, mode) => {
      const result = merge(hook, events[hook], [{ policy: "p", priority: 0, status: "error" }]);
      expect(result.policies[0]?.failMode).toBe(mode);
      expect(result.decision.outcome).toBe(mode === "fail-closed" ? "block" : "allow");
    },
  );

  it("lets an explicit failure mode override the hook's default, in both directions", () => {
    const opened = merge("before_tool_call", events.before_tool_call, [
      { policy: "p", priority: 0, status: "timeout", failMode: "fail-open" },
    ]);
    expect(opened.decision.outcome).toBe("allow");
    const closed = merge("before_llm_call", events.before_llm_call, [
      { policy: "p", priority: 0, status: "timeout", failMode: "fail-closed" },
    ]);
    expect(closed.decision.outcome).toBe("block");
    expect(closed.decision.blockReason).toContain('"p"');
  });

  it("gives a fail-closed failure without error details a reason naming policy and status", () => {
    const result = merge("before_tool_call", events.before_tool_call, [
      { policy: "no-worker", priority: 0, status: "unavailable" },
    ]);
    expect(result.decision.blockReason).toBe('policy "no-worker" failed closed (unavailable)');
  });

  it("ignores a verdict that came with a failed status", () => {
    const result = merge("before_tool_call", events.before_tool_call, [
      { policy: "p", priority: 0, status: "error", failMode: "fail-open", verdict: { params: {} } },
    ]);
    expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
  });

  it("lets the highest-priority failure own the block over a lower-priority blocker", () => {
    const result = merge("before_tool_call", events.before_tool_call, [
      ok("guard", 1, { block: true, blockReason: "guard says no" }),
      { policy: "crashed", priority: 5, status: "error" },
    ]);
    expect(result.decision.blockedBy).toBe("crashed");
  });
});

describe("verdict validation", () => {
  it("turns an ok outcome with an unknown verdict field into status invalid with HOOKBUS_INVALID_VERDICT", () => {
    const result = merge("before_tool_call", events.before_tool_call, [
      ok("typo", 3, { parms: { cmd: "true" } }),
    ]);
    expect(result.policies[0]).toMatchObject({
      policy: "typo",
      status: "invalid",
      effect: "failed-closed",
      error: { code: "HOOKBUS_INVALID_VERDICT" },
    });
    expect(result.policies[0]?.error?.message).toContain("parms");
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockReason).toContain('"typo"');
    expect(result.decision.blockReason).toContain("invalid");
  });

  it("turns a wrong-typed verdict field into status invalid", () => {
    const result = merge("before_llm_call", events.before_llm_call, [
      ok("bad-type", 3, { systemPrompt: 42 }),
      ok("bad-block", 2, { block: "yes" }),
      ok("not-an-object", 1, "allow"),
    ]);
    for (const p of result.policies) {
      expect(p.status).toBe("invalid");
      expect(p.error?.code).toBe("HOOKBUS_INVALID_VERDICT");
      expect(p.effect).toBe("failed-open");
    }
    expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
  });

  it("never silently ignores a misspelled redaction at an output gate: it blocks", () => {
    const result = merge("before_response_emit", events.before_response_emit, [
      ok("redactor", 1, { contnet: "[redacted]" }),
    ]);
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockedBy).toBe("redactor");
  });

  it("does not apply any field of an invalid verdict, even the valid ones", () => {
    const result = merge("before_llm_call", events.before_llm_call, [
      ok("half-valid", 1, { systemPrompt: "new", extra: true }),
    ]);
    expect("systemPrompt" in result.decision).toBe(false);
  });

  it("treats a null or absent verdict as no opinion", () => {
    const result = merge("before_tool_call", events.before_tool_call, [
      ok("null", 2, null),
      { policy: "absent", priority: 1, status: "ok" },
      ok("undefined", 0, undefined),
    ]);
    expect(result.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });
    expect(result.policies.map((p) => [p.policy, p.status, p.effect])).toEqual([
      ["null", "ok", "no-opinion"],
      ["absent", "ok", "no-opinion"],
      ["undefined", "ok", "no-opinion"],
    ]);
  });
});
