/**
 * `hookbus/ai` against the real `ai` package (generateText, streamText, wrapLanguageModel, tool)
 * with a scripted model, on real NATS with a coordinator and policy workers (issue 13).
 *
 * The policies are the acceptance matrix (./policies.ts).
 */
import { generateText, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isHookbusError, type Policy } from "../../../src/index.js";
import { hookbusTools, withHookbusRun } from "../../../src/adapters/ai/index.js";
import { gate } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  basePolicies,
  beforeToolCallRecords,
  blockSecrets,
  EMAIL,
  hideDeleteAll,
  policyPipeline,
} from "./policies.js";
import { aiRecordingTools } from "./ai-tools.js";
import { hookbusScriptedModel, type ScriptedStep } from "./scripted-model.js";

const nats = useNatsServer();

const pipeline = (policies?: Policy[], clientTimeoutMs?: number) =>
  policyPipeline(nats.url(), policies, clientTimeoutMs);

const agent = hookbusScriptedModel;

const fourLookups: ScriptedStep = {
  calls: ["a", "b", "c", "d"].map((w, i) => ({
    id: `call-${i + 1}`,
    name: "lookup",
    input: { word: w },
  })),
};

describe("hookbus/ai with generateText", () => {
  it("a plain answer: the user sees the redacted text; the decision is in the log", async () => {
    const p = await pipeline();
    const { model } = agent([{ text: `Write to ${EMAIL} for help.` }]);
    const result = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-text" },
      () => generateText({ model, prompt: "who can help?" }),
    );
    expect(result.text).toBe("Write to [email] for help.");
    expect(result.text).not.toContain(EMAIL);
    const emits = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "decision" && r.hook === "before_response_emit");
    expect(emits).toHaveLength(1);
    expect(emits[0]!.context).toMatchObject({ agentId: "ai-agent", sessionKey: "s-text" });
  });

  it("blocks exec (its execute never runs; the model reads the block), rewrites read_file's path, multi-step", async () => {
    const p = await pipeline();
    const { ran, tools } = aiRecordingTools();
    const { model, base } = agent([
      { calls: [{ id: "c-exec", name: "exec", input: { command: "rm -rf /" } }] },
      { calls: [{ id: "c-read", name: "read_file", input: { path: "/etc/passwd" } }] },
      { text: `Done; mail ${EMAIL}.` },
    ]);
    const result = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-tools" },
      () => generateText({ model, tools, prompt: "clean up", stopWhen: stepCountIs(5) }),
    );
    expect(ran.exec).toEqual([]);
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    expect(result.text).toBe("Done; mail [email].");
    // The block reached the model as the exec call's error result.
    const execError = result.steps[0]!.content.find((c) => c.type === "tool-error");
    expect(String((execError as { error: unknown }).error)).toContain("exec is not allowed");
    const secondPrompt = JSON.stringify(base.doGenerateCalls[1]!.prompt);
    expect(secondPrompt).toContain("exec is not allowed");
    const readResult = result.steps[1]!.content.find((c) => c.type === "tool-result");
    expect((readResult as { output: unknown }).output).toBe("contents of /tmp/sandbox/file");
  });

  it("four parallel calls with at most 3 per turn: the fourth never runs and has no before_tool_call record", async () => {
    const p = await pipeline();
    const { ran, tools } = aiRecordingTools();
    const { model } = agent([fourLookups, { text: "three found" }]);
    const result = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-four" },
      () => generateText({ model, tools, prompt: "look up a b c d", stopWhen: stepCountIs(3) }),
    );
    expect(ran.lookup).toEqual([{ word: "a" }, { word: "b" }, { word: "c" }]);
    const errors = result.steps[0]!.content.filter((c) => c.type === "tool-error");
    expect(errors.map((e) => (e as { toolCallId: string }).toolCallId)).toEqual(["call-4"]);
    const records = await beforeToolCallRecords(p);
    expect(records.map((r) => r.context.toolCallId).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("a tool removed by before_llm_call is not offered, and its call is still refused when executed", async () => {
    const p = await pipeline([...basePolicies, hideDeleteAll]);
    const { ran, tools } = aiRecordingTools();
    const { model, base } = agent([
      { calls: [{ id: "c-del", name: "delete_all", input: {} }] },
      { text: "ok" },
    ]);
    const result = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-narrow" },
      () => generateText({ model, tools, prompt: "delete", stopWhen: stepCountIs(3) }),
    );
    const offered = (base.doGenerateCalls[0]!.tools ?? []).map((t) => t.name).sort();
    expect(offered).toEqual(["exec", "lookup", "read_file"]);
    expect(ran.delete_all).toEqual([]);
    const error = result.steps[0]!.content.find((c) => c.type === "tool-error");
    expect(String((error as { error: unknown }).error)).toContain("was not offered");
  });

  it("a coordinator that is down fails the tool gates closed: no tool runs", async () => {
    // A short deadline: the client retries a call until its deadline in case a coordinator returns.
    const p = await pipeline(basePolicies, 1500);
    const { ran, tools } = aiRecordingTools();
    const { model } = agent([fourLookups]);
    await p.coordinator.stop();
    const result = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-down" },
      () => generateText({ model, tools, prompt: "look up", stopWhen: stepCountIs(1) }),
    );
    expect(ran.lookup).toEqual([]);
    const errors = result.steps[0]!.content.filter((c) => c.type === "tool-error");
    expect(errors).toHaveLength(4);
    for (const e of errors) {
      expect(String((e as { error: unknown }).error)).toMatch(/after_llm_call did not decide/);
    }
  });

  it("two sessions reusing a run id stay isolated (one's allowlist never applies to, or is cleared by, the other)", async () => {
    const p = await pipeline();
    const a = aiRecordingTools();
    const b = aiRecordingTools();
    const bDone = gate();
    // Session A's first allowed call waits until session B's whole run is over, so A's later
    // calls are checked after B's before_llm_call (which, with a shared gate, cleared A's).
    const slowTools = hookbusTools({
      lookup: tool({
        inputSchema: z.object({ word: z.string() }),
        execute: async (input) => {
          if (input.word === "a") await bDone.promise;
          a.ran.lookup.push(input);
          return "found";
        },
      }),
    });
    const modelA = agent([fourLookups, { text: "a done" }]).model;
    const modelB = agent([
      { calls: [{ id: "b-call-1", name: "lookup", input: { word: "z" } }] },
      { text: "b done" },
    ]).model;
    const runA = withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "conv-a", runId: "run-7" },
      () =>
        generateText({
          model: modelA,
          tools: slowTools,
          prompt: "a",
          stopWhen: stepCountIs(3),
          toolCallConcurrency: 1,
        }),
    );
    await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "conv-b", runId: "run-7" },
      () => generateText({ model: modelB, tools: b.tools, prompt: "b", stopWhen: stepCountIs(3) }),
    );
    bDone.open();
    await runA;
    expect(b.ran.lookup).toEqual([{ word: "z" }]);
    expect(a.ran.lookup).toEqual([{ word: "a" }, { word: "b" }, { word: "c" }]);
    const ids = (await beforeToolCallRecords(p)).map((r) => r.context.toolCallId).sort();
    expect(ids).toEqual(["b-call-1", "call-1", "call-2", "call-3"]);
  });

  it("outside a run, a wrapped tool refuses (HOOKBUS_NO_RUN) and never executes", async () => {
    const { ran, tools } = aiRecordingTools();
    const { model } = agent([{ calls: [{ id: "c1", name: "lookup", input: { word: "x" } }] }]);
    const error = await generateText({ model, tools, prompt: "x" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isHookbusError(error, "HOOKBUS_NO_RUN"), String(error)).toBe(true);
    expect(ran.lookup).toEqual([]);
  });
});

describe("hookbus/ai with streamText", () => {
  it("tool calls are held until after_llm_call decided; the stream shows only the redacted final text", async () => {
    const p = await pipeline();
    const { ran, tools } = aiRecordingTools();
    const { model } = agent([fourLookups, { text: `Contact ${EMAIL} now.` }]);
    const { chunks, text } = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-stream" },
      async () => {
        const result = streamText({ model, tools, prompt: "look up", stopWhen: stepCountIs(3) });
        const chunks: string[] = [];
        for await (const chunk of result.textStream) chunks.push(chunk);
        return { chunks, text: await result.text };
      },
    );
    expect(ran.lookup).toEqual([{ word: "a" }, { word: "b" }, { word: "c" }]);
    // The model streamed its answer in two deltas; the user got one, already redacted.
    expect(chunks).toEqual(["Contact [email] now."]);
    expect(chunks.join("")).not.toContain(EMAIL);
    expect(text).toBe("Contact [email] now.");
    const records = await beforeToolCallRecords(p);
    expect(records.map((r) => r.context.toolCallId).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("a blocked final answer is never streamed: the stream reports the block as its error", async () => {
    const p = await pipeline([...basePolicies, blockSecrets]);
    const { model } = agent([{ text: "The SECRET is 42." }]);
    const chunks: string[] = [];
    const thrown = await withHookbusRun(
      { client: p.client, agentId: "ai-agent", sessionKey: "s-stream-block" },
      async () => {
        const result = streamText({ model, prompt: "tell me", onError: () => {} });
        try {
          for await (const chunk of result.textStream) chunks.push(chunk);
          return undefined;
        } catch (error) {
          return error;
        }
      },
    );
    // Reading the stream throws the block; nothing of the answer was streamed before it.
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    expect(chunks).toEqual([]);
  });
});
