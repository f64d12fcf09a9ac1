/**
 * The state key service's bound (docs/privacy.md, "Session state"): a key for a session that has
 * none yet is a new entry in the keys bucket, so each policy may make only so many per window
 * (HOOKBUS_STATE_KEY_QUOTA past that); keys that exist, such as those of recorded sessions, are
 * still handed out, so honest workers keep working.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Header } from "../../../src/bus/headers.js";
import { definePolicy } from "../../../src/index.js";
import { keysBucketName } from "../../../src/privacy/data-keys.js";
import { parseKek } from "../../../src/privacy/index.js";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const nats = useNatsServer();
const allow = definePolicy({
  name: "allow",
  version: "1.0.0",
  hooks: { before_tool_call: () => ({}) },
});

async function askKey(p: Pipeline, policy: string, sessionKey: string) {
  const reply = await p.connections.workers.request(
    p.subjects.stateKey(policy),
    JSON.stringify({ sessionKey }),
    { timeout: 10_000 },
  );
  const body = reply.json<{ kid?: string; error?: { code: string } }>();
  return { code: reply.headers?.get(Header.ErrorCode) ?? "", kid: body.kid };
}

async function keysStored(p: Pipeline): Promise<number> {
  const info = await p.bus.jsm.streams.info(`KV_${keysBucketName(p.subjects)}`);
  return info.state.messages;
}

describe("the state key service", () => {
  it("lets a policy make at most its quota of new session keys; existing keys are not counted", async () => {
    const kek = parseKek(randomBytes(32).toString("hex"), "test");
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "allow", hooks: ["before_tool_call"], priority: 1 }] },
      policies: [allow],
      coordinator: { privacy: { kek, stateKeyQuota: { newKeys: 2, windowMs: 600_000 } } },
    });
    // A recorded call made its session's key: asking for it costs nothing.
    const ctx = {
      agentId: "a",
      sessionKey: "called",
      runId: "r",
      toolName: "read",
      toolCallId: "t",
    };
    await p.client.call("before_tool_call", ctx, { toolName: "read", toolCallId: "t", params: {} });
    const before = await keysStored(p);

    expect((await askKey(p, "rogue", "never-1")).kid).toMatch(/^[0-9a-f]{16}$/);
    expect((await askKey(p, "rogue", "never-2")).kid).toMatch(/^[0-9a-f]{16}$/);
    const refused = await askKey(p, "rogue", "never-3");
    expect(refused).toEqual({ code: "HOOKBUS_STATE_KEY_QUOTA", kid: undefined });
    expect(await keysStored(p)).toBe(before + 2); // the refused request stored nothing

    // Keys that exist are still handed out to the same policy, and the same key as before.
    const again = await askKey(p, "rogue", "never-1");
    expect(again.code).toBe("");
    expect(again.kid).toBe((await askKey(p, "rogue", "never-1")).kid);
    expect((await askKey(p, "rogue", "called")).code).toBe("");
    // Another policy has its own quota.
    expect((await askKey(p, "honest", "never-3")).code).toBe("");
  }, 60_000);
});
