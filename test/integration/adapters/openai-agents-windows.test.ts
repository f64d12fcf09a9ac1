/**
 * `hookbus/openai-agents` streamed runs with a streaming bus policy (issue 34, item 2): a
 * before_response_emit policy registered `stream: true` is asked window by window, with the real
 * Runner and the SDK's ScriptedModel on real NATS with a coordinator and its worker. Its block
 * at the 500th token fails the stream with HOOKBUS_BLOCKED; nothing after the cut is shown.
 */
import { Agent, Runner, setTracingDisabled, type StreamEvent } from "@openai/agents";
import { assistantMessage, modelStream, ScriptedModel } from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { definePolicy, isHookbusError, type DecisionRecord } from "../../../src/index.js";
import { hookbusModel, withHookbusRun } from "../../../src/adapters/openai-agents/index.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { decisionsOf } from "./policies.js";

const nats = useNatsServer();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });

const token = (i: number) => `w${i} `;
const TOKENS = Array.from({ length: 1000 }, (_, i) => token(i + 1));

const stopAt500 = definePolicy({
  name: "stop-at-500",
  hooks: {
    before_response_emit: (event) =>
      event.stream?.window !== undefined && event.content.includes(token(500))
        ? { block: true, blockReason: "the answer went too far" }
        : undefined,
  },
});

async function* streamed(
  deltas: readonly string[],
  read: { n: number },
): AsyncIterable<StreamEvent> {
  yield { type: "response_started" };
  for (const delta of deltas) {
    // A model's deltas arrive over time: each one after a turn of the event loop.
    await Promise.resolve();
    read.n++;
    yield { type: "output_text_delta", delta };
  }
  yield {
    type: "response_done",
    response: {
      id: "resp-1",
      usage: { requests: 1, inputTokens: 10, outputTokens: 1000, totalTokens: 1010 },
      output: [assistantMessage(deltas.join(""))],
    },
  };
}

describe("hookbus/openai-agents streamed runs with a streaming bus policy", () => {
  it("a block at the 500th token fails the stream: a coded error, nothing shown after the cut", async () => {
    const p = await startPipeline(nats.url(), {
      registry: {
        policies: [
          { name: stopAt500.name, hooks: ["before_response_emit"], priority: 100, stream: true },
        ],
      },
      policies: [stopAt500],
    });
    const read = { n: 0 };
    const model = hookbusModel(new ScriptedModel([modelStream(streamed(TOKENS, read))]), {
      name: "scripted-1",
      streamWindow: { chars: 64 },
    });
    const agent = new Agent({ name: "assistant", instructions: "Count.", model });
    const seen: string[] = [];
    const thrown = await withHookbusRun(
      { client: p.client, agentId: "openai-agent", sessionKey: "s-cut" },
      async () => {
        const result = await runner.run(agent, "count", { stream: true });
        try {
          for await (const chunk of result.toTextStream()) seen.push(chunk);
          await result.completed;
          return result.error ?? undefined;
        } catch (error) {
          return error;
        }
      },
    );
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    const shown = seen.join("");
    expect(seen.length).toBeGreaterThan(10);
    for (let i = 500; i <= 1000; i++) expect(shown).not.toContain(token(i));
    expect(shown.endsWith("[the answer went too far]")).toBe(true);
    const before = shown.slice(0, -"[the answer went too far]".length);
    expect(TOKENS.join("").startsWith(before)).toBe(true);
    expect(before.length).toBeGreaterThan(token(400).length * 400);
    expect(read.n).toBeLessThan(TOKENS.length);

    const emits = await decisionsOf(p, "before_response_emit");
    const end = emits.filter((r) => windowOf(r) === undefined);
    expect(end).toHaveLength(1);
    expect(end[0]!.stream).toMatchObject({ shownChars: shown.length });
    expect((end[0]!.event as { stream: { shown: string } }).stream.shown).toBe(shown);
  });
});

function windowOf(record: DecisionRecord): number | undefined {
  return (record.event as { stream?: { window?: number } }).stream?.window;
}
