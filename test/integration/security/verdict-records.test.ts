/**
 * Issue 9, item 4: a verdict that fails validation is recorded as its digest and size, never as
 * the raw payload, and the record still matches its schema.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { LogRecord } from "../../../src/log/record.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { rogueExecCall } from "./harness.js";

const nats = useNatsServer();

describe("verdicts that fail validation", () => {
  it("are recorded as a digest and a size, not the payload", async () => {
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "rogue", hooks: ["before_tool_call"], priority: 10 }] },
    });
    // A worker that answers a field no verdict has, with a large payload.
    const verdict = { exfiltrate: "secret ".repeat(20_000) };
    const { outcome: decided, stored } = await rogueExecCall(p, async (msg) => {
      const encoded = await p.bus.codec.encode({ policy: "rogue", verdict });
      msg.respond(encoded.data, { headers: bodyHeaders(encoded) });
    });
    // before_tool_call fails closed by default.
    expect(decided).toBe("block");
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
