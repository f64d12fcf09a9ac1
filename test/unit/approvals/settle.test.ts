/** The pure settlement rules (src/approvals/settle.ts): answers, groups, timeouts, the decision. */
import { describe, expect, it } from "vitest";
import type { ApprovalEntry } from "../../../src/approvals/entry.js";
import {
  applyAnswer,
  approvalRecord,
  checkedAgainstStops,
  expire,
  settledDecision,
} from "../../../src/approvals/settle.js";
import { LogRecord } from "../../../src/log/record.js";

const T0 = new Date("2026-01-01T00:00:00.000Z");
const at = (ms: number) => new Date(T0.getTime() + ms);

function entry(
  approvers: string[] = [],
  timeoutBehavior: "deny" | "allow" = "deny",
): ApprovalEntry {
  return {
    v: 1,
    id: "a0123456789abcdef0123456789abcde",
    agentId: "bot",
    sessionKey: "s",
    callId: "c",
    hook: "before_tool_call",
    callDigest: "d".repeat(64),
    decisionSeq: 7,
    toolName: "pay",
    params: { amount: 1 },
    paramsDigest: "e".repeat(64),
    request: {
      title: "pay",
      severity: "high",
      timeoutMs: 1000,
      timeoutBehavior,
      approvers,
      askedBy: [{ policy: "p", title: "pay", severity: "high", timeoutMs: 1000, timeoutBehavior }],
    },
    decision: {
      outcome: "pending_approval",
      params: { amount: 1 },
      decidedBy: { params: ["r"], requireApproval: ["p"] },
    },
    requestedAt: T0.toISOString(),
    expiresAt: at(1000).toISOString(),
    answers: [],
  };
}

const answer = (approver: string, group: string, decision: "approve" | "deny" = "approve") => ({
  approver,
  group,
  decision,
});

describe("settling an approval request", () => {
  it("a request naming two groups settles only when both approved; a deny settles at once", () => {
    const one = applyAnswer(entry(["legal", "security"]), answer("alice", "security"), at(1));
    expect(one.settlement).toBeUndefined();
    const both = applyAnswer(one, answer("bob", "legal"), at(2));
    expect(both.settlement).toMatchObject({ resolution: "approved", effect: "allow" });
    const denied = applyAnswer(one, answer("bob", "legal", "deny"), at(2));
    expect(denied.settlement).toMatchObject({ resolution: "denied", effect: "block" });
  });

  it("a settled request takes no more answers", () => {
    const settled = applyAnswer(entry(), answer("alice", "-"), at(1));
    expect(() => applyAnswer(settled, answer("bob", "-", "deny"), at(2))).toThrow(
      expect.objectContaining({ code: "HOOKBUS_APPROVAL_SETTLED" }),
    );
  });

  it("the timeout applies timeoutBehavior, only once due, and never after a settlement", () => {
    expect(expire(entry(), at(999))).toBeUndefined();
    expect(expire(entry(), at(1000))?.settlement).toMatchObject({ effect: "block" });
    expect(expire(entry([], "allow"), at(1000))?.settlement).toMatchObject({ effect: "allow" });
    expect(expire(applyAnswer(entry(), answer("a", "-"), at(1)), at(5000))).toBeUndefined();
  });

  it("the settled decision carries the approved params, or names who denied", () => {
    const ok = settledDecision({
      ...applyAnswer(entry(), answer("alice", "-"), at(1)),
      recordSeq: 9,
    });
    expect(ok).toEqual({
      outcome: "modify",
      params: { amount: 1 },
      decidedBy: { params: ["r"] },
      resolvedApproval: { id: entry().id, resolution: "approved", by: ["alice"], recordSeq: 9 },
    });
    const no = settledDecision(
      applyAnswer(entry(), { ...answer("bob", "-", "deny"), reason: "no" }, at(1)),
    );
    expect(no).toMatchObject({ outcome: "block", blockReason: "approval denied by bob: no" });
  });

  it("the record is the same whoever writes it, and matches the log schema", () => {
    const settled = expire(entry(), at(2000))!;
    expect(approvalRecord(settled, "c1")).toEqual(approvalRecord(settled, "c1"));
    expect(() => LogRecord.parse(approvalRecord(settled, "c1"))).not.toThrow();
  });

  it("a settlement to allow checked against a stop of its tool blocks, names the stop, and records it", () => {
    const stop = {
      kind: "tool" as const,
      name: "pay",
      by: "ops",
      at: at(5).toISOString(),
      reason: "fraud",
    };
    const approved = applyAnswer(entry(), answer("alice", "-"), at(1));
    const stopped = checkedAgainstStops(approved, 12, stop);
    expect(stopped.settlement).toMatchObject({
      resolution: "approved",
      effect: "block",
      stopsRevision: 12,
      stop,
    });
    expect(settledDecision(stopped)).toMatchObject({
      outcome: "block",
      blockedBy: "hookbus:emergency-stop",
      decidedBy: { block: ["hookbus:emergency-stop"] },
      blockReason: `emergency stop: tool pay stopped by ops at ${stop.at}: fraud (the approval, approved by alice, settled after the stop)`,
    });
    const record = LogRecord.parse(approvalRecord(stopped, "c1"));
    expect(record).toMatchObject({ effect: "block", stopsRevision: 12, stop });

    const timedOut = checkedAgainstStops(expire(entry([], "allow"), at(1000))!, 12, stop);
    expect(settledDecision(timedOut).blockReason).toContain("(the approval, timed out to allow,");
  });

  it("a settlement to allow with nothing stopped says which revision it was checked against; a block is left as it is", () => {
    const approved = applyAnswer(entry(), answer("alice", "-"), at(1));
    const checked = checkedAgainstStops(approved, 4, undefined);
    expect(checked.settlement).toMatchObject({ effect: "allow", stopsRevision: 4 });
    expect(checked.settlement?.stop).toBeUndefined();
    expect(settledDecision(checked).outcome).toBe("modify");
    const denied = applyAnswer(entry(), answer("bob", "-", "deny"), at(1));
    expect(checkedAgainstStops(denied, 4, undefined)).toBe(denied);
  });
});
