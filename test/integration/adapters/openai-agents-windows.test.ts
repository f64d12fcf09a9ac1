/**
 * `hookbus/openai-agents` streamed runs with a streaming bus policy (issue 34, item 2): a
 * before_response_emit policy registered `stream: true` is asked window by window, with the real
 * Runner and the SDK's ScriptedModel on real NATS with a coordinator and its worker. Its block
 * at the 500th token fails the stream with HOOKBUS_BLOCKED; nothing after the cut is shown.
 */
import { Agent, Runner, setTracingDisabled } from "@openai/agents";
import { modelStream, ScriptedModel } from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/index.js";
import { hookbusModel, withHookbusRun } from "../../../src/adapters/openai-agents/index.js";
import {
  expectCutAt500,
  expectOneAnswerEnd,
  stopAt500,
  streamingPolicy,
  TOKENS,
} from "../../support/stream-windows.js";
import { streamedResponse } from "../../support/openai-stream.js";
import { readText } from "../../support/text-stream.js";
import { startPipeline, useNatsServer } from "../pipeline/harness.js";
import { decisionsOf } from "./policies.js";

const nats = useNatsServer();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });

describe("hookbus/openai-agents streamed runs with a streaming bus policy", () => {
  it("a block at the 500th token fails the stream: a coded error, nothing shown after the cut", async () => {
    const p = await startPipeline(nats.url(), streamingPolicy(stopAt500));
    const read = { n: 0 };
    const model = hookbusModel(
      new ScriptedModel([modelStream(streamedResponse(TOKENS, { read }))]),
      {
        name: "scripted-1",
        streamWindow: { chars: 64 },
      },
    );
    const agent = new Agent({ name: "assistant", instructions: "Count.", model });
    const seen: string[] = [];
    const thrown = await withHookbusRun(
      { client: p.client, agentId: "openai-agent", sessionKey: "s-cut" },
      async () => {
        const result = await runner.run(agent, "count", { stream: true });
        return readText(result.toTextStream(), seen, async () => {
          await result.completed;
          return result.error ?? undefined;
        });
      },
    );
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    const shown = seen.join("");
    expect(seen.length).toBeGreaterThan(10);
    expectCutAt500(shown);
    expect(read.n).toBeLessThan(TOKENS.length);

    const end = expectOneAnswerEnd(await decisionsOf(p, "before_response_emit"), shown);
    expect(end.stream).toMatchObject({ shownChars: shown.length });
  });
});
