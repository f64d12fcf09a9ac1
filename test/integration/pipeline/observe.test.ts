/**
 * Observational hooks: the agent publishes, the log keeps one record, and a policy's observer
 * handler receives it (from the log, not from the agent).
 */
import { describe, expect, it } from "vitest";
import { definePolicy, type HookContext, type HookEvent } from "../../../src/index.js";
import { observerDurableName } from "../../../src/worker/index.js";
import { kindToken, startPipeline, until, useNatsServer } from "./harness.js";

const nats = useNatsServer();

describe("observational hooks end to end", () => {
  it("lands after_tool_call once in the log (kind observation) and delivers it to the policy's observer", async () => {
    const seen: {
      event: HookEvent<"after_tool_call">;
      context: HookContext<"after_tool_call">;
      id: string;
    }[] = [];
    const taint = definePolicy({
      name: "taint-tracker",
      hooks: {
        after_tool_call: async (event, context, { callId, state }) => {
          seen.push({ event, context, id: callId });
          if (event.toolName === "web_fetch") await state.set("tainted", true);
        },
        before_tool_call: async (event, _context, { state }) =>
          event.toolName === "email_send" && (await state.get<boolean>("tainted"))
            ? { block: true, blockReason: "session read untrusted web content" }
            : undefined,
      },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [{ name: "taint-tracker", hooks: ["before_tool_call"], priority: 10 }],
      },
      policies: [taint],
    });
    const context = {
      agentId: "agent-obs",
      sessionKey: "session obs.1",
      runId: "run-1",
      toolName: "web_fetch",
      toolCallId: "tc-1",
    };
    const event = {
      toolName: "web_fetch",
      toolCallId: "tc-1",
      params: { url: "https://example.com" },
      result: { status: 200, body: "<html>…</html>" },
      durationMs: 42,
      blocked: false,
    };

    // Before the observation the policy allows email.
    const emailCtx = { ...context, toolName: "email_send", toolCallId: "tc-2" };
    const emailEvent = {
      toolName: "email_send",
      toolCallId: "tc-2",
      params: { to: "x@example.com" },
    };
    expect((await p.client.call("before_tool_call", emailCtx, emailEvent)).decision.outcome).toBe(
      "allow",
    );

    const published = await p.client.observe("after_tool_call", context, event, {
      eventId: "obs-1",
    });
    expect(published).toMatchObject({
      eventId: "obs-1",
      duplicate: false,
      stream: p.subjects.logStream,
    });
    // The same eventId again (an agent's retry) is stored once.
    const again = await p.client.observe("after_tool_call", context, event, { eventId: "obs-1" });
    expect(again).toMatchObject({ eventId: "obs-1", duplicate: true, seq: published.seq });

    await until(() => seen.length > 0, 5000, "the observer handler to run");
    expect(seen[0]).toEqual({ event, context, id: "obs-1" });

    const observations = (await p.readLog()).filter((r) => r.record.kind === "observation");
    expect(observations).toHaveLength(1);
    const [stored] = observations;
    expect(stored!.seq).toBe(published.seq);
    expect(kindToken(stored!.subject)).toBe("observed");
    expect(stored!.subject).toBe(
      p.subjects.audit(context.agentId, context.sessionKey, "after_tool_call", "observed"),
    );
    expect(stored!.record).toMatchObject({
      v: 1,
      kind: "observation",
      eventId: "obs-1",
      hook: "after_tool_call",
      context,
      event,
    });

    // The observation changed the policy's state: the next email is blocked.
    const blocked = await p.client.call("before_tool_call", emailCtx, emailEvent);
    expect(blocked.decision).toMatchObject({
      outcome: "block",
      blockReason: "session read untrusted web content",
      blockedBy: "taint-tracker",
    });

    // Delivered once and acked: nothing is pending at the server, so no redelivery can come.
    const consumer = await until(
      async () => {
        const info = await p.bus.jsm.consumers.info(
          p.bus.subjects.logStream,
          observerDurableName(p.bus.subjects.namespace, "taint-tracker", "after_tool_call"),
        );
        return info.num_ack_pending === 0 ? info : undefined;
      },
      5000,
      "the observation acked",
    );
    expect(consumer.num_redelivered).toBe(0);
    expect(seen).toHaveLength(1);
  });
});
