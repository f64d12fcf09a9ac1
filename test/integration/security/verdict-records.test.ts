/**
 * Issue 9, item 4: a verdict that fails validation is recorded as its digest and size, never as
 * the raw payload, and the record still matches its schema.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { LogRecord } from "../../../src/log/record.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";

const nats = useNatsServer();

describe("verdicts that fail validation", () => {
  it("are recorded as a digest and a size, not the payload", async () => {
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "rogue", hooks: ["before_tool_call"], priority: 10 }] },
    });
    // A worker that answers a field no verdict has, with a large payload.
    const verdict = { exfiltrate: "secret ".repeat(20_000) };
    const sub = p.connections.workers.subscribe(p.subjects.policyWildcard("rogue"), {
      queue: p.subjects.policyQueue("rogue"),
      callback: (_e, msg) => {
        void (async () => {
          const encoded = await p.bus.codec.encode({ policy: "rogue", verdict });
          msg.respond(encoded.data, { headers: bodyHeaders(encoded) });
        })();
      },
    });
    try {
      const result = await p.client.call(
        "before_tool_call",
        { agentId: "a", sessionKey: "s", runId: "r" },
        { toolName: "exec", params: {} },
        { callId: "rogue-1" },
      );
      // before_tool_call fails closed by default.
      expect(result.decision.outcome).toBe("block");
    } finally {
      sub.unsubscribe();
    }
    const stored = await p.decisionRecord("rogue-1");
    expect(LogRecord.safeParse(stored.record).success).toBe(true);
    const outcome = stored.record.outcomes[0]!;
    expect(outcome.status).toBe("invalid");
    expect(outcome.verdict).toBeUndefined();
    const text = JSON.stringify(verdict);
    expect(outcome.rejectedVerdict).toEqual({
      sha256: createHash("sha256").update(text).digest("hex"),
      bytes: Buffer.byteLength(text),
    });
    expect(stored.storedBytes).toBeLessThan(10_000);
  });
});
