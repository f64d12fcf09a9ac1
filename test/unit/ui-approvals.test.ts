/**
 * The Approvals page's shaping, without a server: a pending request read from its decision
 * record (the id as carried, else derived as the coordinator derives it), a settled one from its
 * approval record (tolerant of missing fields), the commands an approver pastes, and the page's
 * parameters refused with the parameter's name.
 */
import { describe, expect, it } from "vitest";
import { approvalIdOf } from "../../src/approvals/entry.js";
import type { AuditEntry } from "../../src/audit/query.js";
import { scopedMessageId } from "../../src/log/message-id.js";
import { isHookbusError } from "../../src/foundation/errors.js";
import { approvalsQuery } from "../../src/ui/approvals-page.js";
import {
  answerCommands,
  approvalIdOfDecision,
  pendingView,
  settledView,
} from "../../src/ui/approvals-view.js";

const ID = `a${"1".repeat(31)}`;

function entry(seq: number, record: Record<string, unknown>): AuditEntry {
  return {
    seq,
    subject: "x",
    address: {
      agentId: "bot",
      sessionKey: "s 1",
      hook: "before_tool_call",
      kind: "pending_approval",
    },
    storedAt: new Date("2026-05-01T10:00:05Z"),
    record: record as never,
  };
}

const decision = (extra: Record<string, unknown> = {}) =>
  entry(7, {
    kind: "decision",
    callId: "c-1",
    event: { toolName: "pay", params: {} },
    decidedAt: "2026-05-01T10:00:00.000Z",
    decision: {
      outcome: "pending_approval",
      approval: { id: ID },
      requireApproval: {
        title: "wire money",
        severity: "critical",
        timeoutMs: 60_000,
        timeoutBehavior: "allow",
        approvers: ["payments", "risk"],
        askedBy: [{ policy: "p1" }, { policy: "p2" }],
      },
      ...extra,
    },
  });

describe("pendingView", () => {
  it("reads the request, its asking policies and its expiry (decidedAt + timeoutMs)", () => {
    const v = pendingView(decision());
    expect(v).toMatchObject({
      seq: 7,
      approvalId: ID,
      agentId: "bot",
      sessionKey: "s 1",
      callId: "c-1",
      toolName: "pay",
      title: "wire money",
      severity: "critical",
      approvers: ["payments", "risk"],
      askedBy: ["p1", "p2"],
      timeoutBehavior: "allow",
    });
    expect(v.requestedAt.toISOString()).toBe("2026-05-01T10:00:00.000Z");
    expect(v.expiresAt?.toISOString()).toBe("2026-05-01T10:01:00.000Z");
  });

  it("tolerates a record without a request: defaults, no expiry, the stored time", () => {
    const v = pendingView(entry(3, { kind: "decision", callId: "c-2", decision: {} }));
    expect(v).toMatchObject({ title: "(no title)", severity: "medium", toolName: "?" });
    expect(v.expiresAt).toBeUndefined();
    expect(v.requestedAt.toISOString()).toBe("2026-05-01T10:00:05.000Z");
  });
});

describe("approvalIdOfDecision", () => {
  it("uses the id the decision carries, else derives it as the coordinator does", () => {
    expect(approvalIdOfDecision("bot", "s 1", "c-1", { approval: { id: ID } })).toBe(ID);
    const derived = approvalIdOf(scopedMessageId("decision", "bot", "s 1", "c-1"));
    // A missing or malformed (e.g. redacted) id is not trusted.
    expect(approvalIdOfDecision("bot", "s 1", "c-1", {})).toBe(derived);
    expect(approvalIdOfDecision("bot", "s 1", "c-1", { approval: { id: "<b>" } })).toBe(derived);
    expect(approvalIdOfDecision("bot", "s 2", "c-1", {})).not.toBe(derived);
  });
});

describe("answerCommands", () => {
  it("gives one command per approver group, naming the server and the namespace", () => {
    expect(answerCommands(pendingView(decision()), "prod", "nats://10.0.0.5:4222")).toEqual([
      `npx hookbus approvals approve ${ID} --as YOUR_NAME --server nats://10.0.0.5:4222 --namespace prod --group payments --reason "…"`,
      `npx hookbus approvals approve ${ID} --as YOUR_NAME --server nats://10.0.0.5:4222 --namespace prod --group risk --reason "…"`,
    ]);
    const anyone = pendingView(decision({ requireApproval: { title: "t", approvers: [] } }));
    // The default namespace too: pasted elsewhere, HOOKBUS_NAMESPACE may say otherwise.
    expect(answerCommands(anyone, "hookbus")).toEqual([
      `npx hookbus approvals approve ${ID} --as YOUR_NAME --namespace hookbus --reason "…"`,
    ]);
  });

  it("never puts a group name or a server that is not one word into a command", () => {
    const v = pendingView(
      decision({ requireApproval: { title: "t", approvers: ["ok", "x; rm -rf /"] } }),
    );
    expect(answerCommands(v, "hookbus", "nats://h:1; rm -rf /")).toEqual([
      `npx hookbus approvals approve ${ID} --as YOUR_NAME --namespace hookbus --group ok --reason "…"`,
    ]);
  });
});

describe("settledView", () => {
  it("reads who answered for which group, why, from where and when", () => {
    const v = settledView(
      entry(9, {
        kind: "approval",
        approvalId: ID,
        callId: "c-1",
        decisionSeq: 7,
        resolution: "denied",
        effect: "block",
        answers: [
          {
            approver: "alice",
            group: "payments",
            decision: "deny",
            reason: "unknown payee",
            from: "slack",
            at: "2026-05-01T10:00:30Z",
          },
        ],
        requestedAt: "2026-05-01T10:00:00Z",
        resolvedAt: "2026-05-01T10:00:30Z",
      }),
    );
    expect(v).toMatchObject({
      seq: 9,
      approvalId: ID,
      decisionSeq: 7,
      resolution: "denied",
      effect: "block",
      answers: [{ approver: "alice", group: "payments", reason: "unknown payee", from: "slack" }],
    });
  });

  it("links to no decision when decisionSeq is not a sequence", () => {
    expect(settledView(entry(9, { kind: "approval", decisionSeq: "7" })).decisionSeq).toBe(
      undefined,
    );
    expect(settledView(entry(9, { kind: "approval", answers: "x" })).answers).toEqual([]);
  });
});

describe("approvalsQuery", () => {
  const q = (query: string) => approvalsQuery(new URL(`http://ui.invalid/approvals?${query}`));
  const refused = (query: string): string => {
    try {
      q(query);
    } catch (error) {
      if (isHookbusError(error) && error.code === "HOOKBUS_INVALID_ARGUMENT")
        return String(error.details?.argument);
      throw error;
    }
    throw new Error(`${query} was accepted`);
  };

  it("defaults to both lists, 50 rows, no cursor", () => {
    expect(q("")).toEqual({ agentId: undefined, state: "all", limit: 50, cursor: undefined });
    expect(q("agent=bot&state=pending&limit=500&cursor=12")).toEqual({
      agentId: "bot",
      state: "pending",
      limit: 500,
      cursor: 12,
    });
  });

  it("refuses each bad parameter by name", () => {
    expect(refused("state=open")).toBe("state");
    expect(refused("limit=0")).toBe("limit");
    expect(refused("limit=501")).toBe("limit");
    expect(refused("limit=1e2")).toBe("limit");
    expect(refused("cursor=3")).toBe("cursor");
    expect(refused("state=settled&cursor=-1")).toBe("cursor");
    expect(refused("hook=x")).toBe("hook");
    expect(refused("agent=a&agent=b")).toBe("agent");
  });
});
