/**
 * The call's deadline as an agent of protocol 2 sends it (the body's `timeoutMs`, no header
 * block) and as an older agent did (`Hookbus-Timeout-Ms` and `Hookbus-Call-Id` only): either way
 * the coordinator bounds every policy's ask by it; the body's wins when both are there; a body
 * value that is not a positive number means the default, one that is not a number is a malformed
 * call. And a plain call body that cannot be read is still recorded under its call id.
 */
import type { Msg } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { rawRequest, toolCall } from "../security/harness.js";
import { startPipeline, useNatsServer, type Pipeline } from "./harness.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();

const quiet = definePolicy({ name: "quiet", hooks: { before_tool_call: () => undefined } });

/** A pipeline whose policy would wait 5 minutes: only the call's deadline bounds its asks. */
async function start(): Promise<{ p: Pipeline; asks: Msg[] }> {
  const p = await startPipeline(nats.url(), {
    registry: {
      policies: [{ name: "quiet", hooks: ["before_tool_call"], priority: 10, timeoutMs: 300_000 }],
    },
    policies: [quiet],
  });
  const asks: Msg[] = [];
  p.connections.reader.subscribe(`${p.namespace}.policy.>`, {
    callback: (_e, m) => void asks.push(m),
  });
  await p.connections.reader.flush();
  return { p, asks };
}

/** The deadline the coordinator gave the policy's one ask, read from its body. */
async function askedMs(asks: Msg[]): Promise<number> {
  await until(() => asks.length > 0, 5000, "the policy to be asked");
  const [ask] = asks;
  expect(ask!.headers).toBeUndefined();
  return (JSON.parse(Buffer.from(ask!.data).toString("utf8")) as { timeoutMs: number }).timeoutMs;
}

const call = (callId: string, timeoutMs?: unknown) =>
  JSON.stringify({
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...toolCall(callId, { agentId: "agent-1", sessionKey: "s" }),
  });

/** At most the call's 2 s less the 250 ms kept back for the record (call-handler.ts, reserveFor). */
const WITHIN_2S = 1750;

describe("a call's deadline", () => {
  it.each([
    ["in the body (protocol 2)", call("c-body", 2000), {}],
    [
      "in the header only (an agent before protocol 2)",
      call("c-old"),
      { "Hookbus-Timeout-Ms": "2000", "Hookbus-Call-Id": "c-old" },
    ],
    ["in both: the body's wins", call("c-both", 2000), { "Hookbus-Timeout-Ms": "60000" }],
  ])("bounds the policy's ask when it is %s", async (_name, body, headers) => {
    const { p, asks } = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("agent-1", "before_tool_call"),
      body,
      headers,
    );
    expect(answer.code).toBeUndefined();
    expect((answer.body.decision as { outcome: string }).outcome).toBe("allow");
    const ms = await askedMs(asks);
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThanOrEqual(WITHIN_2S);
  });

  it("reads a body deadline that is not a positive number as none: the default applies", async () => {
    const { p, asks } = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("agent-1", "before_tool_call"),
      call("c-negative", -1),
      { "Hookbus-Timeout-Ms": "2000" },
    );
    expect(answer.code).toBeUndefined();
    // The default 5 s (less its 250 ms reserve), not the header's 2 s: the body named none.
    expect(await askedMs(asks)).toBeGreaterThan(WITHIN_2S);
  });

  it("refuses a body deadline that is not a number as a malformed call, and records it", async () => {
    const { p } = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("agent-1", "before_tool_call"),
      call("c-soon", "soon"),
    );
    expect(answer.code).toBe("HOOKBUS_BAD_MESSAGE");
    const errors = (await p.readLog()).filter((r) => r.record.kind === "error");
    expect(errors.map((r) => r.record.kind === "error" && r.record.callId)).toEqual(["c-soon"]);
  });
});

describe("a plain call body that cannot be read", () => {
  it("is recorded under the call id its first bytes name, with no Hookbus-Call-Id header", async () => {
    const { p } = await start();
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const body = `{"timeoutMs":3000,"callId":"c-deep","hook":"before_tool_call","context":{"agentId":"agent-1","sessionKey":"s","runId":"r"},"event":{"toolName":"x","params":{"v":${deep}}}}`;
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("agent-1", "before_tool_call"),
      body,
    );
    expect(answer.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    const errors = (await p.readLog()).filter((r) => r.record.kind === "error");
    expect(errors).toHaveLength(1);
    const [stored] = errors;
    if (stored?.record.kind !== "error") throw new Error("no error record");
    expect(stored.record.callId).toBe("c-deep");
    expect(stored.record.error.details?.inputSha256).toMatch(/^[0-9a-f]{64}$/);
  });
});
