/**
 * Per-subject encryption through the real pipeline (docs/privacy.md): with `privacy` on, the
 * coordinator stores the personal fields of every record sealed with the subject's data key;
 * the agent still gets the decision in clear; a reader holding the KEK opens the record; a
 * coordinator told to encrypt without a KEK does not start.
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { ENCRYPTED_MARK, subjectDigest } from "../../../src/privacy/index.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { connectTo, uniqueNamespace } from "../../support/nats.js";
import { rejection } from "../../support/wait.js";
import { readerRecordKeys, testKek } from "../../support/privacy.js";

const nats = useNatsServer();
const kek = testKek();

const dlp = definePolicy({
  name: "dlp",
  version: "1.0.0",
  hooks: {
    before_tool_call: (e) =>
      JSON.stringify(e.params).includes("4111")
        ? { block: true, blockReason: "card number in the parameters" }
        : undefined,
  },
});

describe("per-subject encryption of the log", () => {
  it("stores personal fields as ciphertext, keeps clear what the index needs, and opens with the KEK", async () => {
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "dlp", hooks: ["before_tool_call"], priority: 10 }] },
      policies: [dlp],
      coordinator: { privacy: { kek } },
    });
    const run = { agentId: "agent-e", sessionKey: "sess-e", runId: "r1" };
    const got = await p.client.call(
      "before_tool_call",
      run,
      {
        toolName: "pay",
        toolCallId: "t1",
        params: { card: "4111-1111-1111-1111", name: "Ada Lovelace" },
      },
      { callId: "pay-1" },
    );
    expect(got.decision).toMatchObject({
      outcome: "block",
      blockReason: "card number in the parameters",
    });

    const stored = (await p.decisionRecord("pay-1")).record;
    expect(JSON.stringify(stored)).not.toMatch(/4111|Lovelace|card number/);
    expect(stored.event).toEqual({ toolName: "pay", toolCallId: "t1", params: ENCRYPTED_MARK });
    expect(stored.decision.outcome).toBe("block");
    expect(stored.decision.blockedBy).toBe("dlp");
    expect(stored.outcomes.map((o) => [o.policy, o.status])).toEqual([["dlp", "ok"]]);
    expect(stored.encrypted?.alg).toBe("A256GCM");

    const keys = await readerRecordKeys(p, kek);
    const opened = await keys.open(stored);
    expect(opened.failure).toBeUndefined();
    expect(opened.record.event.params).toEqual({
      card: "4111-1111-1111-1111",
      name: "Ada Lovelace",
    });
    expect(opened.record.decision.blockReason).toBe("card number in the parameters");
  });

  it("refuses a call whose context names a malformed subject, and keeps it apart from a named user", async () => {
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "dlp", hooks: ["before_tool_call"], priority: 10 }] },
      policies: [dlp],
      coordinator: { privacy: { kek } },
    });
    const event = { toolName: "pay", toolCallId: "t1", params: { card: "4111" } };
    const bad = await rejection(
      p.client.call(
        "before_tool_call",
        { agentId: "a", sessionKey: "s", subject: "not ok" },
        event,
        {
          callId: "bad-subject",
        },
      ),
    );
    expect((bad as { code?: string }).code).toBe("HOOKBUS_PRIVACY_SUBJECT_INVALID");
    const got = await p.client.call(
      "before_tool_call",
      { agentId: "a", sessionKey: "s", subject: "user-42@acme" },
      event,
      { callId: "named" },
    );
    expect(got.decision.outcome).toBe("block");
    const stored = (await p.decisionRecord("named")).record;
    expect(stored.context.subject).toBe(ENCRYPTED_MARK);
    expect(stored.encrypted?.subject).toBe(subjectDigest("subject:user-42@acme"));
  });

  it("refuses to start a coordinator told to encrypt without a key-encryption key", async () => {
    const nc = await connectTo(nats.url(), "no-kek");
    try {
      const error = await rejection(
        startCoordinator({ nc, namespace: uniqueNamespace(), privacy: {} }),
      );
      expect((error as { code?: string }).code).toBe("HOOKBUS_PRIVACY_KEK_INVALID");
    } finally {
      await nc.close();
    }
  });
});
