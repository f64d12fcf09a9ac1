/**
 * Issue 9, item 3: each "No limits" reproduction now gets a coded error and a record, and calls
 * of other sessions running at the same time are answered as usual.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/index.js";
import { gate } from "../../support/wait.js";
import { startPipeline, useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { json, rawRequest, toolCall, withExecGuard } from "./harness.js";

const nats = useNatsServer();

function start(coordinator: Parameters<typeof startPipeline>[1] = {}): Promise<Pipeline> {
  return startPipeline(nats.url(), {
    ...withExecGuard,
    ...coordinator,
  });
}

/** 40 ordinary calls of other sessions, sent while the hostile one is handled: all must succeed. */
async function withBystanders(p: Pipeline, hostile: () => Promise<unknown>): Promise<void> {
  const bystanders = Array.from({ length: 40 }, (_, i) =>
    p.client.call(
      "before_tool_call",
      { agentId: "bystander", sessionKey: `s-${i}`, runId: "r" },
      { toolName: i % 2 === 0 ? "exec" : "read_file", toolCallId: `t${i}`, params: {} },
    ),
  );
  const [results] = await Promise.all([Promise.allSettled(bystanders), hostile()]);
  const failed = results.filter((r) => r.status === "rejected");
  expect(failed, JSON.stringify(failed.slice(0, 2))).toHaveLength(0);
}

async function expectErrorRecord(p: Pipeline, code: string, limit?: string) {
  const log = await p.readLog();
  const errors = log.filter((r) => r.record.kind === "error");
  expect(errors).toHaveLength(1);
  const record = errors[0]!.record;
  if (record.kind !== "error") throw new Error("unreachable");
  expect(record.error.code).toBe(code);
  if (limit !== undefined) expect(record.error.details?.limit).toBe(limit);
  return errors[0]!;
}

describe("limits", () => {
  it("stops inflating a gzip bomb at the cap (204 KB → 200 MB) and answers HOOKBUS_LIMIT_EXCEEDED", async () => {
    const p = await start();
    const body = `{"callId":"bomb","hook":"before_tool_call","context":{"agentId":"mallory","sessionKey":"s","runId":"r"},"event":{"toolName":"x","params":{"pad":"${"0".repeat(200 * 1024 * 1024)}"}}}`;
    const bomb = gzipSync(body, { level: 9 });
    expect(bomb.length).toBeLessThan(300 * 1024);
    const rssBefore = process.memoryUsage().rss;
    let answer: Awaited<ReturnType<typeof rawRequest>> | undefined;
    await withBystanders(p, async () => {
      answer = await rawRequest(
        p.connections.agent,
        p,
        p.subjects.call("mallory", "before_tool_call"),
        bomb,
        { "Hookbus-Encoding": "gzip" },
      );
    });
    expect(answer?.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    // The test process itself built the 200 MB text once; the decoder added no such copy.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(150 * 1024 * 1024);
    const stored = await expectErrorRecord(p, "HOOKBUS_LIMIT_EXCEEDED", "maxInflatedBytes");
    expect(stored.subject).toBe(
      p.subjects.audit("mallory", "(unknown)", "before_tool_call", "error"),
    );
  });

  it("refuses a 1,500-character agentId without disturbing 40 other sessions", async () => {
    const p = await start();
    const agentId = "a".repeat(1500);
    let answer: Awaited<ReturnType<typeof rawRequest>> | undefined;
    await withBystanders(p, async () => {
      answer = await rawRequest(
        p.connections.agent,
        p,
        p.subjects.call(agentId, "before_tool_call"),
        json(toolCall("long", { agentId, sessionKey: "s" })),
      );
    });
    expect(answer?.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    const stored = await expectErrorRecord(p, "HOOKBUS_LIMIT_EXCEEDED", "id");
    expect(stored.subject).toBe(p.subjects.audit("(invalid)", "s", "before_tool_call", "error"));
  });

  it("refuses 5,000 levels of nesting before anything recursive runs, and the session goes on", async () => {
    const p = await start();
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const body = `{"callId":"deep","hook":"before_tool_call","context":{"agentId":"mallory","sessionKey":"s","runId":"r"},"event":{"toolName":"x","params":{"v":${deep}}}}`;
    let answer: Awaited<ReturnType<typeof rawRequest>> | undefined;
    await withBystanders(p, async () => {
      answer = await rawRequest(
        p.connections.agent,
        p,
        p.subjects.call("mallory", "before_tool_call"),
        body,
      );
    });
    expect(answer?.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    await expectErrorRecord(p, "HOOKBUS_LIMIT_EXCEEDED", "maxDepth");
    // The same session's next call is decided at once.
    const next = await p.client.call(
      "before_tool_call",
      { agentId: "mallory", sessionKey: "s", runId: "r" },
      { toolName: "exec", toolCallId: "t", params: {} },
    );
    expect(next.decision.outcome).toBe("block");
  });

  it("refuses a blob reference naming thousands of chunks before fetching any", async () => {
    const p = await start();
    const ref = {
      blob: "0".repeat(64),
      size: 5000 * 512 * 1024,
      chunks: 5000,
      gzip: true,
      owner: "mallory",
    };
    const started = Date.now();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("mallory", "before_tool_call"),
      json(ref),
      { "Hookbus-Encoding": "blob" },
    );
    expect(answer.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    expect(Date.now() - started).toBeLessThan(2000);
    await expectErrorRecord(p, "HOOKBUS_LIMIT_EXCEEDED", "maxBlobChunks");
  });

  it("refuses a blob reference to another agent's blobs", async () => {
    const p = await start();
    const ref = { blob: "0".repeat(64), size: 10, chunks: 1, gzip: true, owner: "victim" };
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("mallory", "before_tool_call"),
      json(ref),
      { "Hookbus-Encoding": "blob" },
    );
    expect(answer.code).toBe("HOOKBUS_IDENTITY_MISMATCH");
  });

  it("refuses a callId with CR/LF, records it, and the log stays writable", async () => {
    const p = await start();
    const answer = await rawRequest(
      p.connections.agent,
      p,
      p.subjects.call("mallory", "before_tool_call"),
      json(toolCall("a\r\nb", { agentId: "mallory", sessionKey: "s" })),
    );
    expect(answer.code).toBe("HOOKBUS_LIMIT_EXCEEDED");
    const stored = await expectErrorRecord(p, "HOOKBUS_LIMIT_EXCEEDED", "id");
    expect(stored.record.kind === "error" && stored.record.callId).toMatch(/^unidentified\./);
    await withBystanders(p, async () => {});
  });

  it("caps a huge Hookbus-Timeout-Ms at the coordinator's maximum call timeout", async () => {
    const held = gate();
    const stuck = definePolicy({
      name: "stuck",
      hooks: { before_tool_call: () => held.promise.then(() => undefined) },
    });
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "stuck", hooks: ["before_tool_call"], priority: 10, timeoutMs: 300_000 },
        ],
      },
      policies: [stuck],
      coordinator: { limits: { maxCallTimeoutMs: 1500 } },
    });
    try {
      const started = Date.now();
      const answer = await rawRequest(
        p.connections.agent,
        p,
        p.subjects.call("mallory", "before_tool_call"),
        json(toolCall("slow", { agentId: "mallory", sessionKey: "s" })),
        { "Hookbus-Timeout-Ms": "1000000000000" },
        20_000,
      );
      const took = Date.now() - started;
      expect(took).toBeLessThan(5000);
      // fail-closed default at the tool gate: the timed-out policy blocks.
      expect(answer.code).toBeUndefined();
      expect((answer.body.decision as { outcome: string }).outcome).toBe("block");
    } finally {
      held.open();
    }
  });

  it("refuses an agent over its rate limit with HOOKBUS_RATE_LIMITED, and not another agent", async () => {
    const p = await start({ coordinator: { limits: { ratePerAgent: 1, rateBurst: 3 } } });
    const call = (agentId: string, i: number) =>
      p.client.call(
        "before_tool_call",
        { agentId, sessionKey: "s", runId: "r" },
        { toolName: "read_file", toolCallId: `t${i}`, params: {} },
      );
    const flood = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => call("noisy", i)));
    const limited = flood.filter(
      (r) =>
        r.status === "rejected" && (r.reason as { code?: string }).code === "HOOKBUS_RATE_LIMITED",
    );
    expect(limited.length).toBeGreaterThanOrEqual(6);
    expect((await call("quiet", 0)).decision.outcome).toBe("allow");
    const errors = (await p.readLog()).filter((r) => r.record.kind === "error");
    expect(errors.length).toBe(limited.length);
  });
});
