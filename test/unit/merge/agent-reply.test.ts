/**
 * before_agent_reply: the first reply by priority wins and short-circuits the agent; its reason
 * comes with it and only with it.
 */
import { describe, expect, it } from "vitest";
import { type HookEvent, type PolicyOutcomeInput } from "../../../src/index.js";
import { checkedMerge, ok } from "../../support/merge.js";

function merge(outcomes: PolicyOutcomeInput[]) {
  const event: HookEvent<"before_agent_reply"> = { cleanedBody: "/approve 42" };
  return checkedMerge("before_agent_reply", event, outcomes);
}

describe("before_agent_reply", () => {
  it("lets the first reply by priority win, with outcome reply", () => {
    const result = merge([
      ok("wizard", 1, { reply: { text: "step 2 of 3" }, reason: "wizard" }),
      ok("approvals", 5, { reply: { text: "approved #42" }, reason: "approval flow" }),
    ]);
    expect(result.decision).toStrictEqual({
      outcome: "reply",
      reply: { text: "approved #42" },
      reason: "approval flow",
      decidedBy: { reply: ["approvals"], reason: ["approvals"] },
    });
  });

  it("keeps extra fields of the reply payload", () => {
    const reply = { text: "pick one", buttons: ["a", "b"] };
    expect(merge([ok("form", 1, { reply })]).decision.reply).toEqual(reply);
  });

  it("takes the reason only from the winning reply, never from a lower-priority one", () => {
    const result = merge([
      ok("winner", 5, { reply: { text: "hi" } }),
      ok("loser", 1, { reply: { text: "other" }, reason: "loser's reason" }),
    ]);
    expect(result.decision.outcome).toBe("reply");
    expect(result.decision.reply).toEqual({ text: "hi" });
    expect("reason" in result.decision).toBe(false);
  });

  it("ignores a reason from a policy that gave no reply", () => {
    const reasonOnly = merge([ok("talker", 5, { reason: "just saying" })]);
    expect(reasonOnly.decision).toStrictEqual({ outcome: "allow", decidedBy: {} });

    const withLowerReply = merge([
      ok("talker", 5, { reason: "just saying" }),
      ok("replier", 1, { reply: { text: "hello" } }),
    ]);
    expect(withLowerReply.decision).toStrictEqual({
      outcome: "reply",
      reply: { text: "hello" },
      decidedBy: { reply: ["replier"] },
    });
  });

  it("allows the agent to run when no policy replies", () => {
    expect(merge([ok("quiet", 1, {}), ok("null", 2, null)]).decision).toStrictEqual({
      outcome: "allow",
      decidedBy: {},
    });
  });

  it("treats a block field as an invalid verdict (this hook cannot be blocked by a verdict)", () => {
    const result = merge([ok("blocker", 1, { block: true })]);
    expect(result.decision.outcome).toBe("allow");
    expect(result.policies[0]).toMatchObject({
      status: "invalid",
      effect: "failed-open",
      error: { code: "HOOKBUS_INVALID_VERDICT" },
    });
  });

  it("ignores a failing reply policy by default (fail-open) and lets the agent run", () => {
    const result = merge([{ policy: "wizard", priority: 1, status: "timeout" }]);
    expect(result.decision.outcome).toBe("allow");
    expect(result.policies[0]?.failMode).toBe("fail-open");
  });

  it("blocks the agent when a reply policy configured fail-closed fails, even over a reply", () => {
    const result = merge([
      ok("wizard", 9, { reply: { text: "hi" } }),
      { policy: "gatekeeper", priority: 1, status: "unavailable", failMode: "fail-closed" },
    ]);
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockedBy).toBe("gatekeeper");
    expect(result.decision.blockReason).toContain('"gatekeeper"');
    expect("reply" in result.decision).toBe(false);
  });
});
