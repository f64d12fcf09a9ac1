/**
 * A re-sent call with encryption on (docs/privacy.md): the coordinator finds the record of the
 * first attempt and answers from it; that record's decision is sealed, so the answer must be the
 * fresh decision (same call, same digest), never "[encrypted]" in place of rewritten params or an
 * allowlist.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { parseKek } from "../../../src/privacy/index.js";

const nats = useNatsServer();
const kek = parseKek(randomBytes(32).toString("hex"), "test");

const rewrite = definePolicy({
  name: "rewrite",
  version: "1.0.0",
  hooks: {
    before_tool_call: () => ({ params: { path: "/safe" } }),
    after_llm_call: () => ({ toolCalls: [{ id: "t1" }] }),
  },
});

describe("a re-sent call with encryption on", () => {
  it("is answered with the decision in clear, not the sealed record's", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [{ name: "rewrite", hooks: ["before_tool_call", "after_llm_call"], priority: 1 }],
      },
      policies: [rewrite],
      coordinator: { privacy: { kek } },
    });
    const ctx = { agentId: "a", sessionKey: "s", runId: "r", toolName: "read", toolCallId: "t1" };
    const event = { toolName: "read", toolCallId: "t1", params: { path: "/etc/shadow" } };
    const seqs = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const got = await p.client.call("before_tool_call", ctx, event, { callId: "same" });
      expect(got.decision).toMatchObject({ outcome: "modify", params: { path: "/safe" } });
      seqs.push(got.recordSeq);
    }
    expect(seqs[1]).toBe(seqs[0]); // the second answer came from the stored record
    const llm = {
      toolCalls: [
        { id: "t1", name: "read", arguments: {} },
        { id: "crypt", name: "rm", arguments: {} },
      ],
      response: "",
      model: "m",
      iteration: 1,
    };
    const answers = [];
    for (let attempt = 0; attempt < 2; attempt++) {
      const got = await p.client.call("after_llm_call", ctx, llm, { callId: "llm" });
      answers.push(got);
    }
    expect(answers[0]!.decision.outcome).toBe("modify");
    expect(JSON.stringify(answers[0]!.decision.toolCalls)).toContain("t1");
    expect(answers[1]!.recordSeq).toBe(answers[0]!.recordSeq); // answered from the stored record
    expect(answers[1]!.decision).toEqual(answers[0]!.decision);
  }, 60_000);
});
