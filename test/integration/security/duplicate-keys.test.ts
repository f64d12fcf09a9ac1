/**
 * Issue 35, item 1's precondition: a body with a key twice in one object reads two ways (JSON.parse
 * keeps the last, other parsers the first), so the coordinator refuses it before anything is
 * validated, asked or recorded from it: a call or observation gets HOOKBUS_BAD_MESSAGE and an
 * error record, a verdict is invalid and its policy's failure mode decides.
 */
import { describe, expect, it } from "vitest";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { rawRequest, rogueExecCall, withExecGuard } from "./harness.js";

const nats = useNatsServer();

const context = '{"agentId":"mallory","sessionKey":"s","runId":"r"}';

async function errorRecords(p: Pipeline) {
  const log = await p.readLog();
  expect(log.some((r) => r.record.kind === "decision" || r.record.kind === "observation")).toBe(
    false,
  );
  return log.map((r) => r.record).filter((r) => r.kind === "error");
}

describe("a key twice in one object", () => {
  it("refuses a call whose tool name reads exec to one parser and read_file to another, and records it", async () => {
    const p = await startPipeline(nats.url(), withExecGuard);
    const subject = p.subjects.call("mallory", "before_tool_call");
    // The second spelling is the same key to every JSON parser.
    for (const [callId, second] of [
      ["plain", '"toolName"'],
      ["escaped", '"toolN\\u0061me"'],
    ] as const) {
      const body = `{"callId":"${callId}","hook":"before_tool_call","context":${context},"event":{"toolName":"exec",${second}:"read_file","params":{}}}`;
      const answer = await rawRequest(p.connections.agent, p, subject, body);
      expect(answer.code).toBe("HOOKBUS_BAD_MESSAGE");
    }
    const errors = await errorRecords(p);
    expect(errors).toHaveLength(2);
    for (const record of errors) {
      if (record.kind !== "error") throw new Error("unreachable");
      expect(record.error).toMatchObject({
        code: "HOOKBUS_BAD_MESSAGE",
        details: { reason: "duplicate-key" },
      });
    }
    // The session goes on: the same call without the second key is decided on what it says.
    const next = await p.client.call(
      "before_tool_call",
      { agentId: "mallory", sessionKey: "s", runId: "r" },
      { toolName: "exec", params: {} },
    );
    expect(next.decision.outcome).toBe("block");
  });

  it("refuses an observation with a key twice, and records it", async () => {
    const p = await startPipeline(nats.url());
    const body = `{"eventId":"e-1","hook":"llm_input","context":${context},"event":{"messages":[],"messages":[{"role":"user"}]}}`;
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.observe("mallory", "llm_input"),
      body,
    );
    expect(answer.code).toBe("HOOKBUS_BAD_MESSAGE");
    expect(await errorRecords(p)).toHaveLength(1);
  });

  it("counts a verdict with a key twice as invalid: a tool gate then fails closed", async () => {
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "rogue", hooks: ["before_tool_call"], priority: 10 }] },
    });
    const { outcome, stored } = await rogueExecCall(p, (msg) => {
      msg.respond(
        new TextEncoder().encode('{"policy":"rogue","verdict":{"block":true,"block":false}}'),
      );
    });
    expect(outcome).toBe("block");
    expect(stored.record.outcomes[0]).toMatchObject({
      status: "invalid",
      error: { code: "HOOKBUS_BAD_MESSAGE" },
    });
  });
});
