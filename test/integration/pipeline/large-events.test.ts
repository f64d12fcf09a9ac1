/**
 * A before_llm_call of ~5 MB (five times NATS's default max_payload) through agent, coordinator,
 * two policy workers (one answering with a multi-megabyte verdict) and the log; then the recorded
 * event is read back byte for byte and replayed in process with the same policy definitions.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  definePolicy,
  invokePolicy,
  MemorySessionStateStore,
  mergeOutcomes,
  type HookEvent,
  type Policy,
  type PolicyOutcomeInput,
} from "../../../src/index.js";
import { startPipeline, useNatsServer, type Pipeline } from "./harness.js";

const nats = useNatsServer();

const MiB = 1024 * 1024;
const MESSAGES = 40;
const PER_MESSAGE = 128 * 1024; // 40 × 128 KiB = 5 MiB of message text
const KEEP = 30;

/** Random base64: gzip gets it down to ~75%, far above 1 MiB. */
function incompressible(i: number): string {
  return `${i}:${randomBytes((PER_MESSAGE * 3) / 4).toString("base64")}`;
}

/** Prose repeated: gzip shrinks it to a few kilobytes. */
function compressible(i: number): string {
  const line = `Message ${i}: the quick brown fox jumps over the lazy dog while the agent keeps talking. `;
  return line.repeat(Math.ceil(PER_MESSAGE / line.length)).slice(0, PER_MESSAGE);
}

const summarizer = definePolicy({
  name: "summarizer",
  version: "1.0.0",
  hooks: {
    before_llm_call: (e) =>
      e.messages.length > KEEP
        ? {
            messages: [
              {
                role: "system",
                content: `summary of ${e.messages.length - KEEP} earlier messages`,
              },
              ...e.messages.slice(-KEEP),
            ],
          }
        : undefined,
  },
});

const promptGuard = definePolicy({
  name: "prompt-guard",
  hooks: {
    before_llm_call: (e) => ({
      systemPrompt: `stay on topic (${e.messages.length} messages seen)`,
      // Loses to summarizer (first writer wins).
      messages: [{ role: "user", content: "lower-priority rewrite" }],
    }),
  },
});

const policies: Policy[] = [summarizer, promptGuard];

function bytesOf(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}

async function largeCall(p: Pipeline, text: (i: number) => string, callId: string) {
  const event: HookEvent<"before_llm_call"> = {
    messages: Array.from({ length: MESSAGES }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: text(i),
    })),
    systemPrompt: "You are helpful.",
    model: "gpt-4o",
    iteration: 3,
  };
  const eventBytes = bytesOf(event);
  expect(eventBytes.length).toBeGreaterThan(5 * MiB);
  expect(eventBytes.length).toBeGreaterThan(5 * (p.connections.agent.info?.max_payload ?? MiB));

  const context = { agentId: "agent-large", sessionKey: `s-${callId}`, runId: "run-1" };
  const result = await p.client.call("before_llm_call", context, event, { callId });
  expect(result.source).toBe("coordinator");
  const expectedMessages = [
    { role: "system", content: `summary of ${MESSAGES - KEEP} earlier messages` },
    ...event.messages.slice(-KEEP),
  ];
  expect(result.decision.outcome).toBe("modify");
  expect(result.decision.decidedBy).toEqual({
    messages: ["summarizer"],
    systemPrompt: ["prompt-guard"],
  });
  expect(result.decision.systemPrompt).toBe(`stay on topic (${MESSAGES} messages seen)`);
  // The multi-megabyte verdict reached the agent intact.
  expect(bytesOf(result.decision.messages).equals(bytesOf(expectedMessages))).toBe(true);

  const stored = await p.decisionRecord(callId);
  expect(stored.seq).toBe(result.recordSeq);
  const { record } = stored;
  expect(record.hook).toBe("before_llm_call");
  // The recorded input is the event the agent sent, byte for byte.
  expect(bytesOf(record.event).equals(eventBytes)).toBe(true);
  expect(record.decision).toEqual(result.decision);
  // (The SDK parses the decision with the hook's schema, which orders keys its own way.)
  expect(bytesOf(record.decision.messages).equals(bytesOf(result.decision.messages))).toBe(true);
  expect(record.outcomes.map((o) => [o.policy, o.status, o.effect])).toEqual([
    ["summarizer", "ok", "applied"],
    ["prompt-guard", "ok", "applied"],
  ]);

  // Replay: the same policy definitions, in process, on the recorded input, merged the same way.
  const state = new MemorySessionStateStore();
  const replayed: PolicyOutcomeInput[] = [];
  for (const outcome of record.outcomes) {
    const policy = policies.find((candidate) => candidate.name === outcome.policy)!;
    const evaluated = await invokePolicy(policy, "before_llm_call", record.event, record.context, {
      callId: record.callId,
      state,
    });
    expect(evaluated.status).toBe("ok");
    expect(bytesOf(evaluated.verdict).equals(bytesOf(outcome.verdict))).toBe(true);
    replayed.push({
      policy: outcome.policy,
      ...(policy.version === undefined ? {} : { version: policy.version }),
      priority: outcome.priority,
      mode: outcome.mode,
      failMode: outcome.failMode,
      status: evaluated.status,
      ...(evaluated.verdict === undefined ? {} : { verdict: evaluated.verdict }),
      ...(evaluated.error === undefined ? {} : { error: evaluated.error }),
      latencyMs: evaluated.latencyMs,
    });
  }
  const merged = mergeOutcomes(
    "before_llm_call",
    record.event as HookEvent<"before_llm_call">,
    replayed,
  );
  expect(merged.decision).toEqual(record.decision);
  expect(bytesOf(merged.decision).equals(bytesOf(record.decision))).toBe(true);
  return {
    stored,
    retry: () => p.client.call("before_llm_call", context, event, { callId }),
    result,
  };
}

describe("large events through the whole pipeline", () => {
  it("carries a 5 MB incompressible before_llm_call to two policies and the agent, stores its record as a blob, and replays it to the same decision", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "summarizer", hooks: ["before_llm_call"], priority: 100, timeoutMs: 20_000 },
          { name: "prompt-guard", hooks: ["before_llm_call"], priority: 50, timeoutMs: 20_000 },
        ],
      },
      policies,
      clientTimeoutMs: 30_000,
    });
    const { stored, retry, result } = await largeCall(p, incompressible, "large-random");
    expect(stored.encoding).toBe("blob");
    expect(stored.headers?.get("Hookbus-Encoding")).toBe("blob");
    // The log message is only the reference; the chunks are in the blob stream.
    expect(stored.storedBytes).toBeLessThan(1024);
    const blobs = await p.bus.jsm.streams.info(p.subjects.blobStream);
    expect(blobs.state.bytes).toBeGreaterThan(5 * MiB);

    // The agent retries the call: the coordinator reads the stored (blob) record back and answers it.
    expect(await retry()).toEqual(result);
    expect(await p.decisionRecords("large-random")).toHaveLength(1);
  }, 60_000);

  it("carries a 5 MB compressible before_llm_call the same way, gzipped inline in one log message", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: "summarizer", hooks: ["before_llm_call"], priority: 100, timeoutMs: 20_000 },
          { name: "prompt-guard", hooks: ["before_llm_call"], priority: 50, timeoutMs: 20_000 },
        ],
      },
      policies,
      clientTimeoutMs: 30_000,
    });
    const { stored } = await largeCall(p, compressible, "large-prose");
    expect(stored.encoding).toBe("gzip");
    expect(stored.storedBytes).toBeLessThan(MiB);
  }, 60_000);
});
