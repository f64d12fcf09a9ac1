/**
 * Issue 31, item 2: an emergency stop holds at every point where a call can still proceed, on a
 * real nats-server, through the public API (the agent SDK, `hookbus stop`, the approvals client):
 * - an approval granted after a stop of its tool or agent gives block, and its record says so;
 * - an approval that times out with `timeoutBehavior: "allow"` after a stop gives block;
 * - a call decided before the stop keeps its decision (an approval settled before it, a re-sent
 *   call answered from its record), and its record names the stop list revision it was checked
 *   against, older than the stop's;
 * - the agent's fast path answers no call of a stopped tool.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  Bus,
  HookbusClient,
  type ApprovalProgress,
  type ApprovalRecord,
  type DecisionRecord,
  type LogRecord,
} from "../../../src/index.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { sessionTimeline } from "../../../src/audit/index.js";
import { main } from "../../../src/cli/main.js";
import type { Output } from "../../../src/cli/output.js";
import { readLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { openRegistryBucket } from "../../../src/registry/store.js";
import { startPipeline, type Pipeline } from "../approvals/harness.js";

const nats = useNatsServer();
const namespace = uniqueNamespace("stophold");
let pipeline: Pipeline;
let nc: NatsConnection;
/** An agent without the fast path: its calls of hooks without policies are decided and recorded. */
let recorded: HookbusClient;

beforeAll(async () => {
  pipeline = await startPipeline(() => nats.connect(), namespace);
  nc = await nats.connect("test");
  recorded = await HookbusClient.connect({ nc: await nats.connect(), namespace, fastPath: false });
}, 60_000);

afterAll(async () => {
  await recorded?.close();
  await pipeline?.client.close();
  await pipeline?.coordinator?.stop();
  await pipeline?.runner.stop();
}, 30_000);

async function cli(...args: string[]) {
  const lines: string[] = [];
  const out: Output = { print: (l) => lines.push(l), error: (l) => lines.push(l) };
  const code = await main([...args, "--server", nats.url(), "--namespace", namespace], out);
  return { code, text: lines.join("\n") };
}

/** Stop (or resume) through the CLI, confirmed by the coordinator; the stop list revision. */
async function change(action: "stop" | "resume", kind: "agent" | "tool", name: string) {
  const done = await cli(action, kind, name, "--by", "ops", "--reason", "incident 31", "--json");
  expect(done.code).toBe(0);
  return (JSON.parse(done.text) as { revision: number }).revision;
}

const ctx = (callId: string, agentId: string) => ({
  agentId,
  sessionKey: "s-hold",
  runId: "r",
  toolCallId: callId,
});
const wire = (callId: string, params: Record<string, unknown> = {}) => ({
  toolName: "wire_money",
  toolCallId: callId,
  params: { to: "acct-9", amount: 1000, ...params },
});

/** A wire_money call held for approval (the harness's `asker` asks for every tool call). */
async function held(callId: string, agentId: string, params: Record<string, unknown> = {}) {
  const progress: ApprovalProgress[] = [];
  const result = pipeline.client.call(
    "before_tool_call",
    ctx(callId, agentId),
    wire(callId, params),
    {
      callId,
      onApproval: (p) => progress.push(p),
    },
  );
  result.catch(() => {});
  const first = await until(() => progress[0], 15_000, `${callId} pending`);
  return { result, id: first.id };
}

async function approve(id: string) {
  return answerApproval(
    nc,
    { id, decision: "approve", reason: "ok" },
    { namespace, approver: "alice" },
  );
}

async function log(): Promise<LogRecord[]> {
  return readLog(await Bus.open(nc, { namespace }));
}

function approvalRecordOf(records: LogRecord[], callId: string): ApprovalRecord | undefined {
  return records.find((r): r is ApprovalRecord => r.kind === "approval" && r.callId === callId);
}

function decisionRecordOf(records: LogRecord[], callId: string): DecisionRecord | undefined {
  return records.find((r): r is DecisionRecord => r.kind === "decision" && r.callId === callId);
}

describe("an emergency stop holds after the decision", () => {
  it("an approval granted after `hookbus stop tool wire_money` gives block, and its record names the stop", async () => {
    const { result, id } = await held("wm-approved", "agent-1");
    const revision = await change("stop", "tool", "wire_money");
    // The approver answers with the CLI, and is told the call stays blocked.
    const answered = await cli("approvals", "approve", id, "--as", "alice", "--reason", "ok");
    expect(answered.code).toBe(0);
    expect(answered.text).toMatch(
      /: approved, but the call is blocked: tool wire_money is under an emergency stop \(by ops at /,
    );
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "block",
      blockedBy: "hookbus:emergency-stop",
      resolvedApproval: { id, resolution: "approved", by: ["alice"] },
    });
    expect(decision.blockReason).toMatch(
      /^emergency stop: tool wire_money stopped by ops at .+: incident 31 \(the approval, approved by alice, settled after the stop\)$/,
    );
    expect(approvalRecordOf(await log(), "wm-approved")).toMatchObject({
      resolution: "approved",
      effect: "block",
      stopsRevision: revision,
      stop: { kind: "tool", name: "wire_money", by: "ops", reason: "incident 31" },
      answers: [{ approver: "alice", decision: "approve" }],
    });
    const timeline = await sessionTimeline(await Bus.open(nc, { namespace }), "s-hold");
    expect(timeline.find((step) => step.kind === "approval")?.summary).toMatch(
      /^approved by alice \("ok"\), blocked by the emergency stop of tool wire_money \(by ops\), decision #\d+$/,
    );
    await change("resume", "tool", "wire_money");
  });

  it("an approval that times out to allow after a stop of its agent gives block", async () => {
    const { result } = await held("wm-timeout", "agent-2", { t: 1500, tb: "allow" });
    const revision = await change("stop", "agent", "agent-2");
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "block",
      blockedBy: "hookbus:emergency-stop",
      resolvedApproval: { resolution: "timed-out" },
    });
    expect(decision.blockReason).toMatch(/^emergency stop: agent agent-2 stopped by ops/);
    expect(decision.blockReason).toContain("timed out to allow");
    expect(approvalRecordOf(await log(), "wm-timeout")).toMatchObject({
      resolution: "timed-out",
      effect: "block",
      stopsRevision: revision,
      stop: { kind: "agent", name: "agent-2" },
    });
    await change("resume", "agent", "agent-2");
  });

  it("an approval settled before the stop keeps its decision, and its record says it was checked before the stop", async () => {
    const callId = "wm-before";
    const pending = await pipeline.client.call(
      "before_tool_call",
      ctx(callId, "agent-3"),
      wire(callId),
      { callId, waitForApproval: false },
    );
    const id = pending.decision.approval!.id;
    const reply = await approve(id);
    expect(reply.entry.settlement).toMatchObject({ effect: "allow" });
    const checkedAt = reply.entry.settlement!.stopsRevision!;
    const revision = await change("stop", "tool", "wire_money");
    expect(revision).toBeGreaterThan(checkedAt);
    // The agent learns the settlement only now, after the stop: it was decided before it.
    const decision = await pipeline.client.waitForApproval("agent-3", { id, callId });
    expect(decision).toMatchObject({
      outcome: "allow",
      resolvedApproval: { resolution: "approved" },
    });
    const record = approvalRecordOf(await log(), callId);
    expect(record).toMatchObject({ effect: "allow", stopsRevision: checkedAt });
    expect(record?.stop).toBeUndefined();
    // A new call of the tool is blocked at once, before anyone is asked.
    const fresh = await pipeline.client.call(
      "before_tool_call",
      ctx("wm-after", "agent-3"),
      wire("wm-after"),
      {
        callId: "wm-after",
      },
    );
    expect(fresh.decision).toMatchObject({ outcome: "block", blockedBy: "hookbus:emergency-stop" });
    await change("resume", "tool", "wire_money");
  });

  it("a re-sent call recorded before the stop is answered from its record; a new call is blocked", async () => {
    const callId = "result-1";
    const event = {
      toolName: "wire_money",
      toolCallId: callId,
      params: {},
      result: "sent",
      isError: false,
    };
    const first = await recorded.call("before_tool_result", ctx(callId, "agent-4"), event, {
      callId,
    });
    expect(first).toMatchObject({ source: "coordinator", decision: { outcome: "allow" } });
    const revision = await change("stop", "tool", "wire_money");

    const again = await recorded.call("before_tool_result", ctx(callId, "agent-4"), event, {
      callId,
    });
    expect(again).toMatchObject({ decision: { outcome: "allow" }, recordSeq: first.recordSeq });
    const record = decisionRecordOf(await log(), callId);
    expect(record?.stopsRevision).toBeLessThan(revision);

    const other = await recorded.call(
      "before_tool_result",
      ctx("result-2", "agent-4"),
      { ...event, toolCallId: "result-2" },
      { callId: "result-2" },
    );
    expect(other.decision).toMatchObject({ outcome: "block", blockedBy: "hookbus:emergency-stop" });
    expect(decisionRecordOf(await log(), "result-2")?.stopsRevision).toBe(revision);
    await change("resume", "tool", "wire_money");
  });

  it("the fast path answers no call of a stopped tool", async () => {
    const event = (id: string) => ({
      toolName: "wire_money",
      toolCallId: id,
      params: {},
      result: "x",
      isError: false,
    });
    // before_tool_result has no policy: the fast path answers it while nothing is stopped.
    await until(async () => {
      const r = await pipeline.client.call(
        "before_tool_result",
        ctx("fp-0", "agent-5"),
        event("fp-0"),
      );
      return r.source === "fast-path";
    });
    await change("stop", "tool", "wire_money");
    // `hookbus stop` returned: no agent's fast path may answer the stopped tool any more.
    const stopped = await pipeline.client.call(
      "before_tool_result",
      ctx("fp-1", "agent-5"),
      event("fp-1"),
      {
        callId: "fp-1",
      },
    );
    expect(stopped).toMatchObject({
      source: "coordinator",
      decision: { outcome: "block", blockedBy: "hookbus:emergency-stop" },
    });
    expect(stopped.recordSeq).toBeGreaterThan(0);
    await change("resume", "tool", "wire_money");
  });

  it("a stop costs only what it stops: other tools and agents keep their fast path (issue 32, item 5)", async () => {
    const event = (id: string, tool: string) => ({
      toolName: tool,
      toolCallId: id,
      params: {},
      result: "x",
      isError: false,
    });
    let k = 0;
    const call = (agentId: string, tool: string) => {
      const id = `cost-${++k}`;
      return pipeline.client.call("before_tool_result", ctx(id, agentId), event(id, tool), {
        callId: id,
      });
    };
    await change("stop", "tool", "wire_money");
    await change("stop", "agent", "agent-7");
    await change("stop", "tool", "class:shell");
    // Not stopped: answered locally, as with no stop at all.
    expect(await call("agent-6", "read_file")).toMatchObject({
      source: "fast-path",
      decision: { outcome: "allow" },
    });
    expect(pipeline.client.stats().fastPath).toBeGreaterThan(0);
    // Stopped by name, by class (Bash is a shell) and by agent: decided and recorded by a coordinator.
    for (const [agentId, tool, by] of [
      ["agent-6", "wire_money", /^emergency stop: tool wire_money /],
      ["agent-6", "Bash", /^emergency stop: tool class:shell /],
      ["agent-7", "read_file", /^emergency stop: agent agent-7 /],
    ] as const) {
      const stopped = await call(agentId, tool);
      expect(stopped).toMatchObject({ source: "coordinator", decision: { outcome: "block" } });
      expect(stopped.decision.blockReason).toMatch(by);
      expect(stopped.recordSeq).toBeGreaterThan(0);
    }
    // The stopped agent's LLM calls too; another agent's keep the fast path.
    const llm = (agentId: string) =>
      pipeline.client.call(
        "before_llm_call",
        { agentId, sessionKey: "s-hold", runId: "r" },
        { messages: [{ role: "user", content: "hi" }] },
      );
    expect((await llm("agent-6")).source).toBe("fast-path");
    expect(await llm("agent-7")).toMatchObject({
      source: "coordinator",
      decision: { outcome: "block", blockedBy: "hookbus:emergency-stop" },
    });
    await change("resume", "tool", "wire_money");
    await change("resume", "agent", "agent-7");
    await change("resume", "tool", "class:shell");
  });

  it("an approval cannot settle to allow while the stop list cannot be read: refused, it stays pending, and settles once the list is read", async () => {
    const { result, id } = await held("wm-unreadable", "agent-8");
    const kv = await openRegistryBucket(nc, new Subjects(namespace));
    await kv.put("stops", JSON.stringify({ stops: "everything" }));
    await until(() => pipeline.coordinator!.stops().readable === false, 3000);
    expect(await rejection(approve(id))).toMatchObject({ code: "HOOKBUS_STOP_LIST_UNREADABLE" });
    // The operator's repair (docs/operations.md): delete the malformed key.
    await kv.delete("stops");
    await until(() => pipeline.coordinator!.stops().readable, 3000);
    await approve(id);
    const { decision } = await result;
    expect(decision.outcome).not.toBe("block");
    expect(decision).toMatchObject({ resolvedApproval: { resolution: "approved", by: ["alice"] } });
  });
});
