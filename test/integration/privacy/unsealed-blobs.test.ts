/**
 * A blob reference without a key (docs/privacy.md, "Blobs"): an agent older than sealed blobs
 * stores a large body in clear, where no erasure reaches it. With encryption on, the coordinator
 * refuses such a call (HOOKBUS_BLOB_UNSEALED, telling the operator to upgrade the agent) before a
 * chunk is read; without encryption it is still decided.
 */
import { createHash, randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import { headers } from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { Header } from "../../../src/bus/headers.js";
import { encodeToken } from "../../../src/bus/tokens.js";
import { definePolicy } from "../../../src/index.js";
import { parseKek } from "../../../src/privacy/index.js";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const nats = useNatsServer();
const allow = definePolicy({
  name: "allow",
  version: "1.0.0",
  hooks: { before_tool_call: () => ({}) },
});

/** What an older agent sent: the call's body stored in clear, its reference without a key. */
async function callWithClearBlob(p: Pipeline, callId: string) {
  const context = { agentId: "old-agent", sessionKey: "s", runId: "r", toolCallId: "t1" };
  const event = { toolName: "read", toolCallId: "t1", params: { note: "Quokka-5521-Lisle" } };
  const body = { callId, hook: "before_tool_call", context, event };
  const stored = gzipSync(JSON.stringify(body));
  const blob = createHash("sha256").update(stored).digest("hex");
  const owner = encodeToken(context.agentId);
  await p.bus.js.publish(`${p.subjects.blob(owner, blob)}.0`, stored);
  const ref = { blob, size: stored.length, chunks: 1, gzip: true, owner };
  const h = headers();
  h.set(Header.Encoding, "blob");
  h.set(Header.CallId, callId);
  const reply = await p.connections.agent.request(
    p.subjects.call(context.agentId, "before_tool_call"),
    JSON.stringify(ref),
    { timeout: 10_000, headers: h },
  );
  return { code: reply.headers?.get(Header.ErrorCode) ?? "", text: reply.string() };
}

const registry = { policies: [{ name: "allow", hooks: ["before_tool_call"], priority: 1 }] };

describe("a blob reference without a key", () => {
  it("is refused with HOOKBUS_BLOB_UNSEALED when the namespace encrypts", async () => {
    const kek = parseKek(randomBytes(32).toString("hex"), "test");
    const p = await startPipeline(nats.url(), {
      registry,
      policies: [allow],
      coordinator: { privacy: { kek } },
    });
    const got = await callWithClearBlob(p, "clear-enc");
    expect(got.code).toBe("HOOKBUS_BLOB_UNSEALED");
    expect(got.text).toContain("upgrade the agent");
    // Refused, never decided: no decision record names the call.
    expect(await p.decisionRecords("clear-enc")).toHaveLength(0);
    const log = JSON.stringify((await p.readLog()).map((stored) => stored.record));
    expect(log).toContain("HOOKBUS_BLOB_UNSEALED");
  }, 60_000);

  it("is still decided when the namespace does not encrypt", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [allow] });
    const got = await callWithClearBlob(p, "clear-plain");
    expect(got.code).toBe("");
    expect(JSON.parse(got.text)).toMatchObject({
      callId: "clear-plain",
      decision: { outcome: "allow" },
    });
  }, 60_000);
});
