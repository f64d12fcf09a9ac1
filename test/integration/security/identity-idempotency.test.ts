/**
 * Issue 9, items 1 and 2: the subject's agent token is the identity, and a callId reused for a
 * different call is refused and recorded, never answered with another call's decision.
 */
import { describe, expect, it } from "vitest";
import { HookbusError } from "../../../src/index.js";
import { rejection, startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { json, rawRequest, toolCall, withExecGuard } from "./harness.js";

const nats = useNatsServer();

function start(): Promise<Pipeline> {
  return startPipeline(nats.url(), {
    ...withExecGuard,
  });
}

const ctx = (agentId: string, sessionKey: string) => ({ agentId, sessionKey, runId: "run-1" });
const tool = (toolName: string) => ({ toolName, toolCallId: "tc-1", params: { cmd: "x" } });

describe("identity is the subject", () => {
  it("refuses a call whose context claims another agent, and records it under the subject's agent", async () => {
    const p = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("agent-a", "before_tool_call"),
      json(toolCall("spoof-1", { agentId: "agent-b", sessionKey: "s-b" })),
    );
    expect(answer.code).toBe("HOOKBUS_IDENTITY_MISMATCH");
    const log = await p.readLog();
    expect(log).toHaveLength(1);
    const [stored] = log;
    expect(stored!.record.kind).toBe("error");
    expect(stored!.subject).toBe(p.subjects.audit("agent-a", "s-b", "before_tool_call", "error"));
    // Nothing was written into agent-b's sessions.
    expect(log.some((r) => r.subject.includes(".agent-b."))).toBe(false);
  });

  it("refuses a non-canonical spelling of an agent token", async () => {
    const p = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      `${p.namespace}.call.=61gent-a.before_tool_call`,
      json(toolCall("spoof-2", { agentId: "agent-a", sessionKey: "s" })),
    );
    expect(answer.code).toBe("HOOKBUS_IDENTITY_MISMATCH");
  });
});

describe("idempotency is scoped to agent and session, and checked", () => {
  it("never answers exec with read_file's decision under a reused callId, and records the attempt", async () => {
    const p = await start();
    const first = await p.client.call(
      "before_tool_call",
      ctx("agent-a", "s-1"),
      tool("read_file"),
      {
        callId: "X",
      },
    );
    expect(first.decision.outcome).toBe("allow");

    const error = await rejection(
      p.client.call("before_tool_call", ctx("agent-a", "s-1"), tool("exec"), { callId: "X" }),
    );
    expect(error).toBeInstanceOf(HookbusError);
    expect((error as HookbusError).code).toBe("HOOKBUS_CALL_ID_CONFLICT");

    const log = await p.readLog();
    const errors = log.filter((r) => r.record.kind === "error");
    expect(errors).toHaveLength(1);
    const record = errors[0]!.record;
    expect(record.kind === "error" && record.error.code).toBe("HOOKBUS_CALL_ID_CONFLICT");
    expect(record.kind === "error" && record.event).toMatchObject({ toolName: "exec" });
    expect(errors[0]!.headers?.get("Hookbus-Call-Digest")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("decides the same callId afresh in another session and for another agent", async () => {
    const p = await start();
    await p.client.call("before_tool_call", ctx("agent-a", "s-1"), tool("read_file"), {
      callId: "Y",
    });
    const otherSession = await p.client.call(
      "before_tool_call",
      ctx("agent-a", "s-2"),
      tool("exec"),
      {
        callId: "Y",
      },
    );
    expect(otherSession.decision.outcome).toBe("block");
    const otherAgent = await p.client.call(
      "before_tool_call",
      ctx("agent-b", "s-1"),
      tool("exec"),
      {
        callId: "Y",
      },
    );
    expect(otherAgent.decision.outcome).toBe("block");
    expect(await p.decisionRecords("Y")).toHaveLength(3);
  });

  it("answers a true retry with the recorded decision and stores it once", async () => {
    const p = await start();
    const first = await p.client.call("before_tool_call", ctx("agent-a", "s-1"), tool("exec"), {
      callId: "R",
    });
    const retry = await p.client.call("before_tool_call", ctx("agent-a", "s-1"), tool("exec"), {
      callId: "R",
    });
    expect(retry.decision).toEqual(first.decision);
    expect(retry.recordSeq).toBe(first.recordSeq);
    const [stored] = await p.decisionRecords("R");
    expect(stored!.headers?.get("Hookbus-Call-Digest")).toBe(stored!.record.callDigest);
    expect(await p.decisionRecords("R")).toHaveLength(1);
  });
});
