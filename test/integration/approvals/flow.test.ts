/**
 * The approval flow end to end on a real nats-server: a policy asks, the agent SDK waits (with
 * progress), a person approves or denies through the public API the CLI uses, or the timeout
 * applies each behaviour; each settlement is exactly one log record linked to its decision, and
 * the audit timeline shows it.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  Bus,
  HookbusClient,
  type ApprovalProgress,
  type DecisionRecord,
  type LogRecord,
} from "../../../src/index.js";
import { sessionTimeline } from "../../../src/audit/index.js";
import { readLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import { ctx, startPipeline, toolEvent, type Pipeline } from "./harness.js";
import { answerApproval } from "../../../src/approvals/client.js";

const nats = useNatsServer();
let pipeline: Pipeline | undefined;

afterEach(async () => {
  await pipeline?.client.close();
  await pipeline?.coordinator?.stop();
  await pipeline?.runner.stop();
  pipeline = undefined;
});

function approvalsOf(records: readonly LogRecord[], callId: string) {
  return records.filter((r) => r.kind === "approval" && r.callId === callId);
}

function decisionOf(records: readonly LogRecord[], callId: string): DecisionRecord | undefined {
  return records.find((r): r is DecisionRecord => r.kind === "decision" && r.callId === callId);
}

/** Start a call and wait until its pending request is visible (the first progress report). */
async function pending(p: Pipeline, callId: string, params: Record<string, unknown> = {}) {
  const progress: ApprovalProgress[] = [];
  const result = p.client.call("before_tool_call", ctx(callId), toolEvent(callId, params), {
    callId,
    onApproval: (report) => progress.push(report),
  });
  result.catch(() => {});
  const first = await until(() => progress[0], 15_000, `progress of ${callId}`);
  return { result, progress, first };
}

describe("approvals", () => {
  it("an approved call proceeds with the rewritten params; one approval record, linked to the decision", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result, first } = await pending(pipeline, "call-ok", { secret: "hunter2" });
    expect(first.request.title).toBe("run shell");
    expect(first.request.askedBy.map((a) => a.policy)).toEqual(["asker"]);
    // The approver sees the params as merged, not the original secret.
    expect(first.params).toEqual({ cmd: "rm -rf /tmp/x", secret: "[redacted]" });

    const reply = await answerApproval(
      await nats.connect(),
      { id: first.id, decision: "approve", reason: "looked fine", from: "test" },
      { namespace, approver: "alice" },
    );
    expect(reply.entry.settlement?.resolution).toBe("approved");

    const { decision, recordSeq } = await result;
    expect(decision).toMatchObject({
      outcome: "modify",
      params: { cmd: "rm -rf /tmp/x", secret: "[redacted]" },
      resolvedApproval: {
        id: first.id,
        resolution: "approved",
        by: ["alice"],
        reason: "looked fine",
      },
    });

    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    const pendingRecord = decisionOf(records, "call-ok");
    expect(pendingRecord?.decision).toMatchObject({ outcome: "pending_approval" });
    const settled = approvalsOf(records, "call-ok");
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({
      kind: "approval",
      resolution: "approved",
      effect: "allow",
      decisionSeq: recordSeq,
      callDigest: pendingRecord?.callDigest,
      answers: [
        { approver: "alice", group: "-", decision: "approve", reason: "looked fine", from: "test" },
      ],
    });

    // The audit timeline shows the pending decision, then its settlement.
    const timeline = await sessionTimeline(
      await Bus.open(await nats.connect(), { namespace }),
      "s-approvals",
    );
    expect(timeline.map((s) => s.kind)).toEqual(["decision", "approval"]);
    expect(timeline[1]?.summary).toContain("approved by alice");
  });

  it("a denied call is blocked, with who denied and why; a second answer is refused", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result, first } = await pending(pipeline, "call-deny");
    const nc = await nats.connect();
    await answerApproval(
      nc,
      { id: first.id, decision: "deny", reason: "not today" },
      { namespace, approver: "bob" },
    );
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "block",
      blockedBy: "approval",
      blockReason: "approval denied by bob: not today",
    });
    const late = await rejection(
      answerApproval(nc, { id: first.id, decision: "approve" }, { namespace, approver: "alice" }),
    );
    expect(late).toMatchObject({ code: "HOOKBUS_APPROVAL_SETTLED" });
    const records = await readLog(await Bus.open(nc, { namespace }));
    expect(approvalsOf(records, "call-deny")).toHaveLength(1);
  });

  it("a timeout with timeoutBehavior deny blocks, recorded once", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result } = await pending(pipeline, "call-t-deny", { t: 1500 });
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "block",
      resolvedApproval: { resolution: "timed-out" },
    });
    expect(decision.blockReason).toMatch(/approval timed out/);
    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    expect(approvalsOf(records, "call-t-deny")).toMatchObject([
      { resolution: "timed-out", effect: "block", answers: [] },
    ]);
  });

  it("a timeout with timeoutBehavior allow lets the call run, recorded once", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result } = await pending(pipeline, "call-t-allow", { t: 1500, tb: "allow" });
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "allow",
      resolvedApproval: { resolution: "timed-out" },
    });
    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    expect(approvalsOf(records, "call-t-allow")).toMatchObject([
      { resolution: "timed-out", effect: "allow" },
    ]);
  });

  it("an answer for another call's digest is refused; an answer for a group the request does not name too", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result, first } = await pending(pipeline, "call-bound", { g: "security" });
    const nc = await nats.connect();
    const stale = await rejection(
      answerApproval(
        nc,
        { id: first.id, decision: "approve", callDigest: "0".repeat(64) },
        { namespace, approver: "alice", group: "security" },
      ),
    );
    expect(stale).toMatchObject({ code: "HOOKBUS_APPROVAL_DIGEST_MISMATCH" });
    const noGroup = await rejection(
      answerApproval(nc, { id: first.id, decision: "approve" }, { namespace, approver: "alice" }),
    );
    expect(noGroup).toMatchObject({ code: "HOOKBUS_APPROVAL_FORBIDDEN" });
    await answerApproval(
      nc,
      { id: first.id, decision: "approve" },
      { namespace, approver: "alice", group: "security" },
    );
    expect((await result).decision).toMatchObject({ resolvedApproval: { by: ["alice"] } });
  });

  it("re-sending the same call finds its settled request (an approval is for that call only, a new call asks again)", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { result, first } = await pending(pipeline, "call-again");
    await answerApproval(
      await nats.connect(),
      { id: first.id, decision: "approve" },
      { namespace, approver: "alice" },
    );
    await result;
    const again = await pipeline.client.call(
      "before_tool_call",
      ctx("call-again"),
      toolEvent("call-again"),
      {
        callId: "call-again",
      },
    );
    expect(again.decision).toMatchObject({ outcome: "allow", resolvedApproval: { id: first.id } });
    const other = await pending(pipeline, "call-new");
    expect(other.first.id).not.toBe(first.id);
  });

  it("an agent that restarts while its call is pending re-sends it and waits for the same request", async () => {
    const namespace = uniqueNamespace("ap");
    pipeline = await startPipeline(() => nats.connect(), namespace);
    const { first } = await pending(pipeline, "call-restart");
    // The agent process is gone: a new client on a new connection re-sends the same call.
    await pipeline.client.close();
    const reborn = await HookbusClient.connect({ nc: await nats.connect(), namespace });
    const progress: ApprovalProgress[] = [];
    const again = reborn.call("before_tool_call", ctx("call-restart"), toolEvent("call-restart"), {
      callId: "call-restart",
      onApproval: (p) => progress.push(p),
    });
    expect((await until(() => progress[0], 15_000, "re-sent call pending")).id).toBe(first.id);
    await answerApproval(
      await nats.connect(),
      { id: first.id, decision: "approve" },
      { namespace, approver: "alice" },
    );
    expect((await again).decision).toMatchObject({ resolvedApproval: { id: first.id } });
    await reborn.close();
    const records = await readLog(await Bus.open(await nats.connect(), { namespace }));
    expect(records.filter((r) => r.kind === "decision")).toHaveLength(1);
    expect(approvalsOf(records, "call-restart")).toHaveLength(1);
  });
});
