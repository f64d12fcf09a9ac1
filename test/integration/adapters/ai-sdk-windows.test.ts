/**
 * `streamText` with a streaming bus policy (issue 34, item 2): a before_response_emit policy
 * registered with `stream: true` is asked window by window while the answer streams, on real
 * NATS with a coordinator and its policy worker. Its block cuts the stream with a coded error,
 * and the user sees nothing the model wrote after the cut.
 */
import { streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { definePolicy, isHookbusError, type Policy } from "../../../src/index.js";
import { hookbusMiddleware, withHookbusRun } from "../../../src/adapters/ai/index.js";
import { replay } from "../../../src/replay/index.js";
import {
  expectCutAt500,
  expectOneAnswerEnd,
  stopAt500,
  streamingPolicy,
  token,
  TOKENS,
  windowOf,
} from "../../support/stream-windows.js";
import { readText } from "../../support/text-stream.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { decisionsOf } from "./policies.js";

const nats = useNatsServer();

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1000, text: 1000, reasoning: undefined },
};

const maskSeven = definePolicy({
  name: "mask-seven",
  hooks: {
    before_response_emit: (event) =>
      event.stream?.window !== undefined && event.content.includes(token(7))
        ? { content: event.content.replace(token(7), "[seven] ") }
        : undefined,
  },
});

const maskEmails = definePolicy({
  name: "mask-emails",
  hooks: {
    before_response_emit: (event) =>
      event.stream?.window !== undefined && event.content.includes("bob@corp")
        ? { content: event.content.replaceAll("bob@corp", "[someone]") }
        : undefined,
  },
});

function model(deltas: readonly string[], textEnd = true) {
  let read = 0;
  const scripted = new MockLanguageModelV4({
    provider: "scripted",
    modelId: "streaming-1",
    doStream: () => {
      const parts = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t1" },
        ...deltas.map((delta) => ({ type: "text-delta", id: "t1", delta })),
        ...(textEnd ? [{ type: "text-end", id: "t1" }] : []),
        { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
      ];
      const stream = new ReadableStream({
        pull(controller) {
          const part = parts[read++];
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
      return Promise.resolve({ stream } as never);
    },
  });
  const wrapped = wrapLanguageModel({
    model: scripted,
    middleware: hookbusMiddleware({ streamWindow: { chars: 64 } }),
  });
  return { wrapped, read: () => read };
}

async function streamingPipeline(policy: Policy) {
  return startPipeline(nats.url(), streamingPolicy(policy));
}

describe("hookbus/ai streamText with a streaming bus policy", () => {
  it("a block at the 500th token cuts the stream: a coded error, nothing shown after the cut", async () => {
    const p = await streamingPipeline(stopAt500);
    const m = model(TOKENS);
    const seen: string[] = [];
    const thrown = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-cut" },
      async () => {
        const result = streamText({ model: m.wrapped, prompt: "count", onError: () => {} });
        return readText(result.textStream, seen);
      },
    );
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    const shown = seen.join("");
    // Token by token before the cut: many deltas, each a window the policy allowed.
    expect(seen.length).toBeGreaterThan(10);
    // The block's reason replaces what was cut.
    const before = expectCutAt500(shown);
    // The model's stream is not read to its end once cut.
    expect(m.read()).toBeLessThan(TOKENS.length);

    const emits = await decisionsOf(p, "before_response_emit");
    const windows = emits.filter((r) => windowOf(r) !== undefined);
    expect(windows.at(-1)?.decision).toMatchObject({ outcome: "block" });
    const end = expectOneAnswerEnd(emits, shown);
    const stream = (end.event as { stream: { shown: string; cutAt: number } }).stream;
    expect(TOKENS.join("").slice(0, stream.cutAt)).toBe(before);
    // The record says it in numbers too: what was read, what was shown, where it was cut.
    expect(end.stream).toEqual({
      producedChars: (end.event as { content: string }).content.length,
      shownChars: shown.length,
      cutAt: stream.cutAt,
    });
    expect(windows.at(-1)?.stream?.window).toBe(windows.length);

    // Replay with a changed rule: the candidate masks token 7 and no longer cuts. Per end
    // record it says what was shown and what would have been, up to where the recording stops.
    const results = [];
    for await (const result of replay({
      records: await p.readLog(),
      policies: [maskSeven],
      registry: {
        policies: [
          { name: maskSeven.name, hooks: ["before_response_emit"], priority: 100, stream: true },
        ],
      },
    }))
      results.push(result);
    const ends = results.filter((r) => r.stream !== undefined);
    expect(ends).toHaveLength(1);
    expect(ends[0]!.stream!.shown).toBe(shown);
    expect(ends[0]!.stream!.truncated).toBe(true);
    const would = ends[0]!.stream!.wouldShow;
    expect(would).toContain("w6 [seven] w8 ");
    expect(would).not.toContain("too far");
    expect(TOKENS.join("").replace(token(7), "[seven] ").startsWith(would)).toBe(true);
  });

  it("a window's redaction replaces text not yet shown, split across deltas", async () => {
    const p = await streamingPipeline(maskEmails);
    const m = model(["Write to bo", "b@corp about ", "it. ".repeat(40)]);
    const shown = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-mask" },
      async () => {
        const result = streamText({ model: m.wrapped, prompt: "whom?" });
        let text = "";
        for await (const chunk of result.textStream) text += chunk;
        return text;
      },
    );
    expect(shown).toBe(`Write to [someone] about ${"it. ".repeat(40)}`);
    expect(shown).not.toContain("bob@");
  });
});

describe("hookbus/ai streamText windows at the stream's end", () => {
  it("a text block the model never ended still shows its last window, once allowed", async () => {
    const p = await streamingPipeline(maskEmails);
    const m = model(["Short answer to bo", "b@corp."], false);
    const shown = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-open" },
      async () => {
        const result = streamText({ model: m.wrapped, prompt: "whom?" });
        let text = "";
        for await (const chunk of result.textStream) text += chunk;
        return text;
      },
    );
    expect(shown).toBe("Short answer to [someone].");
  });
});

describe("hookbus/ai streamText with a streaming and a whole-answer policy", () => {
  it("holds the answer: the whole-answer policy decides before anything shows", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: stopAt500.name, hooks: ["before_response_emit"], priority: 100, stream: true },
          { name: maskEmails.name, hooks: ["before_response_emit"], priority: 90 },
        ],
      },
      policies: [stopAt500, maskEmails],
    });
    const m = model(["Write to bo", "b@corp about ", "it. ".repeat(40)]);
    const seen = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-mixed" },
      async () => {
        const result = streamText({ model: m.wrapped, prompt: "whom?" });
        const chunks: string[] = [];
        for await (const chunk of result.textStream) chunks.push(chunk);
        return chunks;
      },
    );
    // One piece, once decided: mask-emails is not asked about windows (it did not opt in).
    expect(seen).toEqual(["Write to bob@corp about " + "it. ".repeat(40)]);
    const emits = await decisionsOf(p, "before_response_emit");
    expect(emits.map((r) => windowOf(r))).toEqual([undefined]);
  });
});
