/**
 * `streamText` in the edge mode (issue 34): with no before_response_emit policy registered, the
 * answer streams token by token through the edge's redactor, on real NATS with a coordinator and
 * policy workers, the real `ai` package and its own mock model streaming the chunks.
 */
import { stepCountIs, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/index.js";
import { hookbusMiddleware, withHookbusRun } from "../../../src/adapters/ai/index.js";
import { readText } from "../../support/text-stream.js";
import { gate, until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import { blockSecrets, maxThreeCalls, noExec, pipelineOn } from "./policies.js";

const nats = useNatsServer();
const pipeline = pipelineOn(nats);
/** No before_response_emit policy: `stream: "auto"` picks the edge mode. */
const noResponsePolicy = [noExec, maxThreeCalls];

const KEY = "sk-proj-7Tq9ZrX2mLw8VbN4cK1pY6hJ3sD5fG0a";
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

type Part = Record<string, unknown> & { type: string };

/** A model streaming `parts`; after `pauseAfter` of them it waits for `resume` before the rest. */
function streamingModel(parts: Part[], pause?: { after: number; resume: Promise<void> }) {
  const model = new MockLanguageModelV4({
    provider: "scripted",
    modelId: "streaming-1",
    doStream: () => {
      let next = 0;
      const stream = new ReadableStream({
        async pull(controller) {
          if (pause !== undefined && next === pause.after) await pause.resume;
          const part = parts[next++];
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
      return Promise.resolve({ stream } as never);
    },
  });
  return wrapLanguageModel({ model, middleware: hookbusMiddleware() });
}

const textParts = (...deltas: string[]): Part[] => [
  { type: "stream-start", warnings: [] },
  { type: "text-start", id: "t1" },
  ...deltas.map((delta) => ({ type: "text-delta", id: "t1", delta })),
  { type: "text-end", id: "t1" },
  { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
];

describe("hookbus/ai streamText in the edge mode", () => {
  it("a secret split across two chunks never appears, at any split offset", async () => {
    const p = await pipeline(noResponsePolicy);
    const answer = `Use the key ${KEY} for the staging API.`;
    const at = answer.indexOf(KEY);
    for (let cut = at; cut <= at + KEY.length; cut++) {
      const model = streamingModel(textParts(answer.slice(0, cut), answer.slice(cut)));
      const chunks = await withHookbusRun(
        { client: p.client, agentId: "ai-agent", sessionKey: `s-split-${cut}` },
        async () => {
          const result = streamText({ model, prompt: "which key?" });
          const seen: string[] = [];
          for await (const chunk of result.textStream) seen.push(chunk);
          return seen;
        },
      );
      expect(chunks.join("")).toBe("Use the key [secret:openai-key] for the staging API.");
    }
  });

  it("the first token arrives before the model finished", async () => {
    const p = await pipeline(noResponsePolicy);
    const resume = gate();
    const opening = "Here is the plan for the migration, step by step, as we agreed on Monday. ";
    const model = streamingModel(
      textParts(opening, "First, back up the database. ", "Then run the script."),
      { after: 3, resume: resume.promise },
    );
    const seen: string[] = [];
    await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-ttft" },
      async () => {
        const result = streamText({ model, prompt: "plan?" });
        const reading = (async () => {
          for await (const chunk of result.textStream) seen.push(chunk);
        })();
        // The model is paused after its first delta: the user already reads most of it.
        await until(() => seen.join("").length > 0, 5000, "a first token while the model streams");
        expect(opening.startsWith(seen.join(""))).toBe(true);
        resume.open();
        await reading;
      },
    );
    expect(seen.join("")).toBe(`${opening}First, back up the database. Then run the script.`);
    expect(seen.length).toBeGreaterThan(1);
  });

  it("reasoning deltas and the UI message stream are redacted the same way", async () => {
    const p = await pipeline(noResponsePolicy);
    const half = KEY.length / 2;
    const model = streamingModel([
      { type: "stream-start", warnings: [] },
      { type: "reasoning-start", id: "r1" },
      { type: "reasoning-delta", id: "r1", delta: `I should not say ${KEY.slice(0, half)}` },
      { type: "reasoning-delta", id: "r1", delta: `${KEY.slice(half)} out loud.` },
      { type: "reasoning-end", id: "r1" },
      ...textParts(`Mail ops@exam`, `ple.com with ${KEY.slice(0, 5)}`, `${KEY.slice(5)}.`).slice(1),
    ]);
    const ui = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-ui" },
      async () => {
        const result = streamText({ model, prompt: "mail whom?" });
        const parts: { type: string; delta?: string }[] = [];
        for await (const part of result.toUIMessageStream({ sendReasoning: true }))
          parts.push(part);
        return parts;
      },
    );
    const deltas = (type: string) =>
      ui
        .filter((part) => part.type === type)
        .map((part) => part.delta)
        .join("");
    expect(deltas("reasoning-delta")).toBe("I should not say [secret:openai-key] out loud.");
    expect(deltas("text-delta")).toBe("Mail [email] with [secret:openai-key].");
    const all = JSON.stringify(ui);
    for (const piece of ["ops@exam", KEY.slice(0, 12), KEY.slice(half)]) {
      expect(all).not.toContain(piece);
    }
  });

  it("forced to the edge with a whole-answer policy: the decision is recorded and its block cuts the stream", async () => {
    const p = await pipeline([noExec, blockSecrets]);
    const model = wrapLanguageModel({
      model: streamingModelBase(textParts("The SECRET is ", `${KEY} and more.`)),
      middleware: hookbusMiddleware({ stream: "edge" }),
    });
    const seen: string[] = [];
    const thrown = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-edge-block" },
      async () => {
        const result = streamText({ model, prompt: "tell me", onError: () => {} });
        return readText(result.textStream, seen);
      },
    );
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    expect(seen.join("")).toBe("The SECRET is [secret:openai-key] and more.");
    const emits = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "decision" && r.hook === "before_response_emit");
    expect(emits).toHaveLength(1);
    expect(emits[0]).toMatchObject({ event: { content: `The SECRET is ${KEY} and more.` } });
  });

  it('stream: "auto" holds the answer while a before_response_emit policy is registered', async () => {
    const p = await pipeline([noExec, blockSecrets]);
    const model = streamingModel(textParts("All ", "fine ", "here."));
    const chunks = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-auto-hold" },
      async () => {
        const result = streamText({ model, prompt: "ok?", stopWhen: stepCountIs(1) });
        const seen: string[] = [];
        for await (const chunk of result.textStream) seen.push(chunk);
        return seen;
      },
    );
    expect(chunks).toEqual(["All fine here."]);
  });
});

function streamingModelBase(parts: Part[]) {
  return new MockLanguageModelV4({
    provider: "scripted",
    modelId: "streaming-1",
    doStream: () => {
      let next = 0;
      const stream = new ReadableStream({
        pull(controller) {
          const part = parts[next++];
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
      return Promise.resolve({ stream } as never);
    },
  });
}
