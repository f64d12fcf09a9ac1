/**
 * `hookbus/openai-agents` streamed runs in the edge mode (issue 34): with no before_response_emit
 * policy registered, `toTextStream()` shows the answer as the model streams it, through the
 * edge's redactor, with the real Runner and the SDK's ScriptedModel, on real NATS with a
 * coordinator and policy workers.
 */
import { Agent, Runner, setTracingDisabled, type StreamEvent } from "@openai/agents";
import { modelStream, ScriptedModel } from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/index.js";
import { hookbusModel, withHookbusRun } from "../../../src/adapters/openai-agents/index.js";
import { streamedResponse } from "../../support/openai-stream.js";
import { readText } from "../../support/text-stream.js";
import { gate, until } from "../../support/wait.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { blockSecrets, maxThreeCalls, noExec, pipelineOn } from "./policies.js";

const nats = useNatsServer();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });
const pipeline = pipelineOn(nats);
const noResponsePolicy = [noExec, maxThreeCalls];

const KEY = "sk-proj-7Tq9ZrX2mLw8VbN4cK1pY6hJ3sD5fG0a";

function agentStreaming(events: AsyncIterable<StreamEvent>, stream?: "edge") {
  const model = hookbusModel(new ScriptedModel([modelStream(events)]), {
    name: "scripted-1",
    ...(stream === undefined ? {} : { stream }),
  });
  return new Agent({ name: "assistant", instructions: "Help.", model });
}

const session = (p: Pipeline, sessionKey: string) => ({
  client: p.client,
  agentId: "openai-agent",
  sessionKey,
});

describe("hookbus/openai-agents streamed runs in the edge mode", () => {
  it("a secret split across two deltas never appears, at any split offset; the final output is what was shown", async () => {
    const p = await pipeline(noResponsePolicy);
    const answer = `Use ${KEY} on staging.`;
    for (let cut = 4; cut <= 4 + KEY.length; cut++) {
      const agent = agentStreaming(streamedResponse([answer.slice(0, cut), answer.slice(cut)]));
      const { chunks, finalOutput } = await withHookbusRun(
        session(p, `s-split-${cut}`),
        async () => {
          const result = await runner.run(agent, "which key?", { stream: true });
          const chunks: string[] = [];
          for await (const chunk of result.toTextStream()) chunks.push(chunk);
          await result.completed;
          return { chunks, finalOutput: result.finalOutput };
        },
      );
      expect(chunks.join("")).toBe("Use [secret:openai-key] on staging.");
      expect(finalOutput).toBe("Use [secret:openai-key] on staging.");
    }
  });

  it("the first token arrives before the model finished", async () => {
    const p = await pipeline(noResponsePolicy);
    const resume = gate();
    const opening = "Here is the plan for the migration, step by step, as we agreed on Monday. ";
    const agent = agentStreaming(
      streamedResponse([opening, "Back up first. ", "Then migrate."], {
        pause: { at: 1, resume: resume.promise },
      }),
    );
    const seen: string[] = [];
    await withHookbusRun(session(p, "s-ttft"), async () => {
      const result = await runner.run(agent, "plan?", { stream: true });
      const reading = (async () => {
        for await (const chunk of result.toTextStream()) seen.push(chunk);
      })();
      await until(() => seen.join("").length > 0, 5000, "a first token while the model streams");
      expect(opening.startsWith(seen.join(""))).toBe(true);
      resume.open();
      await reading;
      await result.completed;
    });
    expect(seen.join("")).toBe(`${opening}Back up first. Then migrate.`);
  });

  it("forced to the edge with a whole-answer policy: its block fails the stream after the redacted text", async () => {
    const p = await pipeline([noExec, blockSecrets]);
    const agent = agentStreaming(streamedResponse(["The SECRET is ", `${KEY}.`]), "edge");
    const seen: string[] = [];
    const thrown = await withHookbusRun(session(p, "s-edge-block"), async () => {
      const result = await runner.run(agent, "tell me", { stream: true });
      return readText(result.toTextStream(), seen, async () => {
        await result.completed;
        return result.error ?? undefined;
      });
    });
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    expect(seen.join("")).not.toContain(KEY.slice(0, 10));
    const emits = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "decision" && r.hook === "before_response_emit");
    expect(emits).toHaveLength(1);
    expect(emits[0]).toMatchObject({ event: { content: `The SECRET is ${KEY}.` } });
  });
});
