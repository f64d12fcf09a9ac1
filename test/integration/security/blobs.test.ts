/**
 * Issue 9, item 5 (blobs): large bodies are stored under the agent they belong to, on
 * `<ns>.blob.<agentToken>.<sha256>.<index>`, and read back by subject (direct get), so NATS
 * permissions can confine an agent to its own blobs.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";

const nats = useNatsServer();

describe("blobs per agent", () => {
  it("stores a large call's blobs (call, policy request, record) under the calling agent's token", async () => {
    const echo = definePolicy({
      name: "echo",
      hooks: { before_llm_call: (e) => ({ systemPrompt: `${e.messages.length} messages` }) },
    });
    const p = await startPipeline(nats.url(), {
      registry: { policies: [{ name: "echo", hooks: ["before_llm_call"], priority: 1 }] },
      policies: [echo],
      clientTimeoutMs: 30_000,
    });
    const big = randomBytes(1.5 * 1024 * 1024).toString("base64");
    const agentId = "agent.big 1";
    const result = await p.client.call(
      "before_llm_call",
      { agentId, sessionKey: "s", runId: "r" },
      { messages: [{ role: "user", content: big }], model: "m", iteration: 0 },
    );
    expect(result.decision.outcome).toBe("modify");

    const info = await p.bus.jsm.streams.info(p.subjects.blobStream, { subjects_filter: ">" });
    const subjects = Object.keys(info.state.subjects ?? {});
    expect(subjects.length).toBeGreaterThan(0);
    const prefix = `${p.namespace}.blob.agent=2Ebig=201.`;
    expect(subjects.filter((s) => !s.startsWith(prefix))).toEqual([]);
    for (const subject of subjects) expect(subject).toMatch(/\.[0-9a-f]{64}\.\d+$/);

    // Read back by subject, the way a restricted agent would.
    const chunk = await p.bus.jsm.direct.getMessage(p.subjects.blobStream, {
      last_by_subj: subjects[0]!,
    });
    expect(chunk?.data.length).toBeGreaterThan(0);
  });
});
