/**
 * What operators change at run time: shadow policies (asked and recorded, never enforced) and
 * registry revisions applied while the coordinator and the agent run.
 */
import { describe, expect, it } from "vitest";
import { definePolicy, HookbusBlockedError } from "../../../src/index.js";
import { expectDecisionRecord, rejection, startPipeline, useNatsServer } from "./harness.js";

const nats = useNatsServer();

const ctx = { agentId: "agent-ops", sessionKey: "session-ops", runId: "run-1" };
const toolCall = (toolName: string, params: Record<string, unknown> = {}) => ({
  toolName,
  toolCallId: `tc-${toolName}`,
  params,
});

describe("shadow policies", () => {
  it("are asked live and recorded with mode shadow, never change the enforced decision, and say when they would have", async () => {
    const asked: string[] = [];
    const shadowGuard = definePolicy({
      name: "shadow-guard",
      version: "0.1.0-rc",
      hooks: {
        before_tool_call: (e, _c, { callId }) => {
          asked.push(callId);
          return e.toolName === "email_send"
            ? { block: true, blockReason: "candidate: no email" }
            : undefined;
        },
        before_tool_result: () => ({ content: "[shadow rewrite]" }),
      },
    });
    const enforcer = definePolicy({
      name: "enforcer",
      hooks: { before_tool_call: () => ({ params: { sanitized: true } }) },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          {
            name: "shadow-guard",
            hooks: ["before_tool_call", "before_tool_result"],
            priority: 1000,
            mode: "shadow",
          },
          { name: "enforcer", hooks: ["before_tool_call"], priority: 10 },
        ],
      },
      policies: [shadowGuard, enforcer],
    });

    // It would have blocked: the agent is still allowed (with the enforced rewrite).
    const email = await p.client.call("before_tool_call", ctx, toolCall("email_send", { to: "x" }));
    expect(email.decision).toEqual({
      outcome: "modify",
      params: { sanitized: true },
      decidedBy: { params: ["enforcer"] },
    });
    expect(asked).toContain(email.callId);
    const stored = await expectDecisionRecord(
      p,
      { callId: email.callId!, hook: "before_tool_call", context: ctx, received: email.decision },
      [
        {
          policy: "shadow-guard",
          priority: 1000,
          mode: "shadow",
          version: "0.1.0-rc",
          effect: "applied",
          verdict: { block: true, blockReason: "candidate: no email" },
        },
        {
          policy: "enforcer",
          priority: 10,
          effect: "applied",
          verdict: { params: { sanitized: true } },
        },
      ],
    );
    expect(stored.record.shadow).toEqual({
      changed: true,
      decision: {
        outcome: "block",
        blockReason: "candidate: no email",
        blockedBy: "shadow-guard",
        decidedBy: { block: ["shadow-guard"] },
      },
    });

    // It agrees: shadow.changed is false, and the decision is the same.
    const read = await p.client.call("before_tool_call", ctx, toolCall("read_file"));
    expect(read.decision).toEqual(email.decision);
    expect(asked).toContain(read.callId);
    const agreed = await p.decisionRecord(read.callId!);
    expect(agreed.record.outcomes.map((o) => [o.policy, o.mode, o.effect])).toEqual([
      ["shadow-guard", "shadow", "no-opinion"],
      ["enforcer", "enforce", "applied"],
    ]);
    expect(agreed.record.shadow).toEqual({ changed: false, decision: read.decision });

    // A hook whose only policy is in shadow still goes to the coordinator (no fast path) and is recorded.
    expect(p.client.isFastPath("before_tool_result")).toBe(false);
    const result = await p.client.call("before_tool_result", ctx, {
      ...toolCall("read_file"),
      result: "file text",
      isError: false,
    });
    expect(result.source).toBe("coordinator");
    expect(result.decision).toEqual({ outcome: "allow", decidedBy: {} });
    const shadowOnly = await p.decisionRecord(result.callId!);
    expect(shadowOnly.record.decision).toEqual(result.decision);
    expect(shadowOnly.record.shadow).toEqual({
      changed: true,
      decision: {
        outcome: "modify",
        content: "[shadow rewrite]",
        decidedBy: { content: ["shadow-guard"] },
      },
    });
  });
});

describe("registry hot reload", () => {
  it("uses a revision applied while the coordinator runs for the next call, without a restart, and records that revision", async () => {
    const audit = definePolicy({
      name: "audit",
      hooks: { before_tool_call: () => undefined },
    });
    const lockdown = definePolicy({
      name: "lockdown",
      hooks: {
        before_tool_call: () => ({ block: true, blockReason: "lockdown in force" }),
        before_response_emit: () => ({ block: true, blockReason: "lockdown: no replies" }),
      },
    });
    const revision1 = {
      policies: [{ name: "audit", hooks: ["before_tool_call"], priority: 10 }],
    };
    // The lockdown worker runs before its policy is registered; nobody asks it yet.
    const p = await startPipeline(nats.url(), { registry: revision1, policies: [audit, lockdown] });
    const coordinatorId = p.coordinator.id;
    const emit = { content: "done", allContent: ["done"] };

    const before = await p.client.call("before_tool_call", ctx, toolCall("shell"));
    expect(before.decision.outcome).toBe("allow");
    expect(before.registryRevision).toBe(p.revision);
    await expectDecisionRecord(
      p,
      { callId: before.callId!, hook: "before_tool_call", context: ctx, received: before.decision },
      [{ policy: "audit", priority: 10, effect: "no-opinion", verdict: undefined }],
    );
    // No policy for before_response_emit yet: answered locally, nothing recorded.
    expect(p.client.isFastPath("before_response_emit")).toBe(true);
    const fast = await p.client.call("before_response_emit", ctx, emit);
    expect(fast.source).toBe("fast-path");

    const revision2 = await p.apply({
      policies: [
        ...revision1.policies,
        {
          name: "lockdown",
          hooks: ["before_tool_call", "before_response_emit"],
          priority: 100,
        },
      ],
    });
    expect(revision2).toBeGreaterThan(p.revision);

    const error = await rejection(
      p.client.beforeToolCall(ctx, toolCall("shell"), { callId: "after-reload" }),
    );
    expect(error).toBeInstanceOf(HookbusBlockedError);
    const blocked = error as HookbusBlockedError<"before_tool_call">;
    expect(blocked).toMatchObject({ blockReason: "lockdown in force", blockedBy: "lockdown" });
    const record = await expectDecisionRecord(
      p,
      {
        callId: "after-reload",
        hook: "before_tool_call",
        context: ctx,
        received: blocked.decision,
        revision: revision2,
      },
      [
        {
          policy: "lockdown",
          priority: 100,
          effect: "applied",
          verdict: { block: true, blockReason: "lockdown in force" },
        },
        { policy: "audit", priority: 10, effect: "no-opinion", verdict: undefined },
      ],
    );
    expect(record.record.coordinator).toBe(coordinatorId);

    // The hook that had no policy now goes to the coordinator too.
    expect(p.client.isFastPath("before_response_emit")).toBe(false);
    const emitted = await p.client.call("before_response_emit", ctx, emit);
    expect(emitted.source).toBe("coordinator");
    expect(emitted.registryRevision).toBe(revision2);
    expect(emitted.decision).toMatchObject({ outcome: "block", blockedBy: "lockdown" });
    expect((await p.decisionRecord(emitted.callId!)).record.registryRevision).toBe(revision2);

    // And back: revision 3 drops lockdown; the next call is allowed and says so.
    const revision3 = await p.apply(revision1);
    const after = await p.client.call("before_tool_call", ctx, toolCall("shell"));
    expect(after.decision.outcome).toBe("allow");
    expect(after.registryRevision).toBe(revision3);
    expect((await p.decisionRecord(after.callId!)).record.registryRevision).toBe(revision3);
    expect(p.client.isFastPath("before_response_emit")).toBe(true);
    expect(p.coordinator.id).toBe(coordinatorId);
  });
});
