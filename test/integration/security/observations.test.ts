/**
 * Issue 9, item 4: observations go through coordinators (validated, identity-checked, recorded),
 * so an agent never writes the log; a reused eventId for a different event is refused.
 */
import { describe, expect, it } from "vitest";
import type { HookbusError } from "../../../src/index.js";
import { rejection, startPipeline, useNatsServer } from "../pipeline/harness.js";
import { json, rawRequest } from "./harness.js";

const nats = useNatsServer();

const run = { agentId: "agent-a", sessionKey: "s-1", runId: "r-1" };

describe("observations through coordinators", () => {
  it("records an observation written by a coordinator, answering its record's sequence", async () => {
    const p = await startPipeline(nats.url());
    const ack = await p.client.observe("llm_input", run, { messages: [] }, { eventId: "e-1" });
    const [stored] = await p.readLog();
    expect(stored).toMatchObject({ seq: ack.seq });
    expect(stored!.record).toMatchObject({ kind: "observation", eventId: "e-1" });
    expect(stored!.record.coordinator).toBe(p.coordinator.id);
    expect(stored!.headers?.get("Hookbus-Call-Digest")).toBe(stored!.record.callDigest);
  });

  it("refuses an observation that claims another agent, recording it under the subject's agent", async () => {
    const p = await startPipeline(nats.url());
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.observe("agent-a", "llm_input"),
      json({
        eventId: "e-2",
        hook: "llm_input",
        context: { ...run, agentId: "agent-b" },
        event: {},
      }),
    );
    expect(answer.code).toBe("HOOKBUS_IDENTITY_MISMATCH");
    const log = await p.readLog();
    expect(log.map((r) => r.record.kind)).toEqual(["error"]);
    expect(log[0]!.subject).toBe(p.subjects.audit("agent-a", "s-1", "llm_input", "error"));
  });

  it("refuses garbage and modifying hooks on the observe subject, and records each", async () => {
    const p = await startPipeline(nats.url());
    const subject = p.subjects.observe("agent-a", "llm_input");
    const garbage = await rawRequest(p.connections.agent, p, subject, "not json at all");
    expect(garbage.code).toBe("HOOKBUS_BAD_MESSAGE");
    const modifying = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.observe("agent-a", "before_tool_call"),
      json({ eventId: "e-3", hook: "before_tool_call", context: run, event: { toolName: "x" } }),
    );
    expect(modifying.code).toBe("HOOKBUS_BAD_MESSAGE");
    const log = await p.readLog();
    expect(log.map((r) => r.record.kind)).toEqual(["error", "error"]);
    expect(log.some((r) => r.record.kind === "observation")).toBe(false);
  });

  it("refuses an eventId reused for a different event, and stores a true retry once", async () => {
    const p = await startPipeline(nats.url());
    const first = await p.client.observe("llm_input", run, { messages: [] }, { eventId: "e-4" });
    const retry = await p.client.observe("llm_input", run, { messages: [] }, { eventId: "e-4" });
    expect(retry).toMatchObject({ duplicate: true, seq: first.seq });
    const error = await rejection(
      p.client.observe("llm_input", run, { messages: [{ role: "user" }] }, { eventId: "e-4" }),
    );
    expect((error as HookbusError).code).toBe("HOOKBUS_CALL_ID_CONFLICT");
    const log = await p.readLog();
    expect(log.map((r) => r.record.kind)).toEqual(["observation", "error"]);
  });
});
