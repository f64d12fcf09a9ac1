/**
 * The framework adapters cover the loop around the model (issue 22): before_agent_reply is asked
 * before a run's first model call (a policy's reply ends the run with that reply and the model is
 * never called; a block refuses the run), and every model call is observed as llm_input and
 * llm_output under the run's id. Through the real AI SDK (generateText and streamText), OpenAI
 * Agents SDK (run and streamed run) and pi Agent, each with its framework's own test model, on
 * real NATS with a coordinator and policy workers.
 */
import { Agent as PiAgent, type AgentTool } from "@mariozechner/pi-agent-core";
import { Type } from "@mariozechner/pi-ai";
import { Agent, Runner, setTracingDisabled, tool as agentsTool } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { generateText, stepCountIs, streamText, tool } from "ai";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import * as ai from "../../../src/adapters/ai/index.js";
import * as agents from "../../../src/adapters/openai-agents/index.js";
import * as pi from "../../../src/adapters/pi/index.js";
import { HookbusClient } from "../../../src/agent/index.js";
import { staticRegistryView } from "../../../src/agent/registry-view.js";
import { isHookbusError, type HookbusClient as Client } from "../../../src/index.js";
import type { DecisionRecord, ObservationRecord } from "../../../src/log/record.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { until } from "../../support/wait.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { useScriptedPiModels } from "./pi-model.js";
import { doorman, pipelineOn } from "./policies.js";
import { hookbusScriptedModel, type ScriptedStep } from "./scripted-model.js";

const nats = useNatsServer();
const pipeline = pipelineOn(nats);
const scriptedPiModel = useScriptedPiModels();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });

/** One model answer: a text, or a call of the read_file tool. */
interface Step {
  text?: string;
  read?: { id: string; path: string };
}

interface Turn {
  client: Client;
  sessionKey: string;
  runId: string;
  prompt: string;
  steps: Step[];
}

interface TurnResult {
  /** The run's final text; undefined when the run failed. */
  text: string | undefined;
  /** How often the framework's own test model was called. */
  modelCalls: number;
  /** The hookbus code the run failed with. */
  error: string | undefined;
}

const REPLY = "Hi! The office opens at 9.";
const readFile = (path: string) => `contents of ${path}`;

function codeOf(error: unknown): string {
  return isHookbusError(error) ? error.code : String(error);
}

function aiTurn(stream: boolean) {
  return async (turn: Turn): Promise<TurnResult> => {
    const { base, model } = hookbusScriptedModel(
      turn.steps.map((s): ScriptedStep =>
        s.read === undefined
          ? { text: s.text ?? "" }
          : { calls: [{ id: s.read.id, name: "read_file", input: { path: s.read.path } }] },
      ),
    );
    const tools = ai.hookbusTools({
      read_file: tool({
        description: "Read a file",
        inputSchema: z.object({ path: z.string() }),
        execute: ({ path }) => readFile(path),
      }),
    });
    const options = { model, tools, prompt: turn.prompt, stopWhen: stepCountIs(5) };
    const modelCalls = () => base.doGenerateCalls.length + base.doStreamCalls.length;
    try {
      const text = await ai.withHookbusRun(
        { client: turn.client, agentId: "app", sessionKey: turn.sessionKey, runId: turn.runId },
        async () => {
          if (!stream) return (await generateText(options)).text;
          // A refusal before the model streams reaches the app through onError.
          let failure: unknown;
          const result = streamText({ ...options, onError: ({ error }) => void (failure = error) });
          let streamed = "";
          for await (const chunk of result.textStream) streamed += chunk;
          if (failure instanceof Error) throw failure;
          expect(streamed).toBe(await result.text);
          return streamed;
        },
      );
      return { text, modelCalls: modelCalls(), error: undefined };
    } catch (error) {
      return { text: undefined, modelCalls: modelCalls(), error: codeOf(error) };
    }
  };
}

function agentsTurn(stream: boolean) {
  return async (turn: Turn): Promise<TurnResult> => {
    const scripted = new ScriptedModel(
      turn.steps.map((s) =>
        s.read === undefined
          ? [assistantMessage(s.text ?? "")]
          : [functionCall("read_file", { path: s.read.path }, { callId: s.read.id })],
      ),
    );
    const model = agents.hookbusModel(scripted, { name: "scripted-1", provider: "scripted" });
    const tools = agents.hookbusTools([
      agentsTool({
        name: "read_file",
        description: "Read a file",
        parameters: z.object({ path: z.string() }),
        execute: ({ path }) => readFile(path),
      }),
    ]);
    const agent = new Agent({ name: "assistant", instructions: "Help.", model, tools });
    try {
      const text = await agents.withHookbusRun(
        { client: turn.client, agentId: "app", sessionKey: turn.sessionKey, runId: turn.runId },
        async () => {
          if (!stream) return (await runner.run(agent, turn.prompt)).finalOutput;
          const result = await runner.run(agent, turn.prompt, { stream: true });
          await result.completed;
          if (result.error instanceof Error) throw result.error;
          return result.finalOutput;
        },
      );
      return { text: text as string, modelCalls: scripted.calls.length, error: undefined };
    } catch (error) {
      return { text: undefined, modelCalls: scripted.calls.length, error: codeOf(error) };
    }
  };
}

async function piTurn(turn: Turn): Promise<TurnResult> {
  const { model, faux } = scriptedPiModel(
    turn.steps.map((s) =>
      s.read === undefined
        ? { text: s.text ?? "" }
        : { calls: [{ id: s.read.id, name: "read_file", args: { path: s.read.path } }] },
    ),
  );
  const readTool: AgentTool = {
    name: "read_file",
    label: "read_file",
    description: "Read a file",
    parameters: Type.Object({ path: Type.String() }),
    execute: (_id, input) =>
      Promise.resolve({
        content: [{ type: "text", text: readFile((input as { path: string }).path) }],
        details: {},
      }),
  };
  const agent = new PiAgent({ initialState: { model, systemPrompt: "Help.", tools: [readTool] } });
  pi.attachHookbus(agent);
  await pi.withHookbusRun(
    { client: turn.client, agentId: "app", sessionKey: turn.sessionKey, runId: turn.runId },
    () => agent.prompt(turn.prompt),
  );
  const error = agent.state.errorMessage;
  const last = agent.state.messages.at(-1);
  const text =
    last?.role === "assistant"
      ? last.content.map((b) => (b.type === "text" ? b.text : "")).join("")
      : undefined;
  return {
    text: error === undefined ? text : undefined,
    modelCalls: faux.state.callCount,
    error: error?.split(":")[0],
  };
}

const frameworks: [string, (turn: Turn) => Promise<TurnResult>][] = [
  ["AI SDK generateText", aiTurn(false)],
  ["AI SDK streamText", aiTurn(true)],
  ["OpenAI Agents run", agentsTurn(false)],
  ["OpenAI Agents streamed run", agentsTurn(true)],
  ["pi Agent", piTurn],
];

/** The run's records of one hook, once `count` are in the log. */
function recordsOf<R extends DecisionRecord | ObservationRecord>(
  p: Pipeline,
  kind: R["kind"],
  hook: string,
  runId: string,
  count: number,
): Promise<R[]> {
  return until(
    async () => {
      const found = (await p.readLog())
        .map((s) => s.record)
        .filter((r): r is R => r.kind === kind && r.hook === hook && r.context.runId === runId);
      return found.length >= count ? found : undefined;
    },
    5000,
    `${count} ${hook} ${kind} records of run ${runId}`,
  );
}

describe.each(frameworks)("the whole loop with the %s", (name, run) => {
  const key = name.replace(/\W+/g, "-");

  it("a policy's reply short-circuits the run: the model is never called", async () => {
    const p = await pipeline([doorman]);
    const runId = `reply-${key}`;
    const result = await run({
      client: p.client,
      sessionKey: `s-reply-${key}`,
      runId,
      prompt: "hello, when do you open?",
      steps: [{ text: "the model's own answer" }],
    });
    expect(result).toEqual({ text: REPLY, modelCalls: 0, error: undefined });
    const [asked] = await recordsOf<DecisionRecord>(p, "decision", "before_agent_reply", runId, 1);
    expect(asked!.event).toEqual({ cleanedBody: "hello, when do you open?" });
    expect(asked!.decision).toMatchObject({ outcome: "reply", reply: { text: REPLY } });
    const log = (await p.readLog()).map((s) => s.record);
    expect(log.filter((r) => r.kind === "observation" && r.hook === "llm_input")).toEqual([]);
  });

  it("a block refuses the run with its code: the model is never called", async () => {
    const p = await pipeline([doorman], undefined, ["doorman"]);
    const result = await run({
      client: p.client,
      sessionKey: `s-block-${key}`,
      runId: `block-${key}`,
      prompt: "a forbidden question",
      steps: [{ text: "the model's own answer" }],
    });
    expect(result).toEqual({ text: undefined, modelCalls: 0, error: "HOOKBUS_BLOCKED" });
  });

  it("asks once per run; llm_input and llm_output record each model call under the run id", async () => {
    const p = await pipeline([doorman]);
    const runId = `loop-${key}`;
    const result = await run({
      client: p.client,
      sessionKey: `s-loop-${key}`,
      runId,
      prompt: "what is in my notes?",
      steps: [{ read: { id: "c-read", path: "/tmp/notes" } }, { text: "They say hi." }],
    });
    expect(result).toEqual({ text: "They say hi.", modelCalls: 2, error: undefined });
    const asked = await recordsOf<DecisionRecord>(p, "decision", "before_agent_reply", runId, 1);
    expect(asked.map((r) => r.event)).toEqual([{ cleanedBody: "what is in my notes?" }]);
    const inputs = await recordsOf<ObservationRecord>(p, "observation", "llm_input", runId, 2);
    const outputs = await recordsOf<ObservationRecord>(p, "observation", "llm_output", runId, 2);
    const byIteration = (records: ObservationRecord[]) =>
      records.map((r) => r.event).sort((a, b) => Number(a.iteration) - Number(b.iteration));
    const [firstIn, secondIn] = byIteration(inputs);
    const [firstOut, secondOut] = byIteration(outputs);
    expect([inputs.length, outputs.length]).toEqual([2, 2]);
    expect(JSON.stringify(firstIn!.messages)).toContain("what is in my notes?");
    // The second call is sent the tool's result: llm_input carries what the model got.
    expect(JSON.stringify(secondIn!.messages)).toContain("contents of /tmp/notes");
    expect(firstOut).toMatchObject({
      iteration: 0,
      assistantTexts: [],
      toolCalls: [{ id: "c-read", name: "read_file", arguments: { path: "/tmp/notes" } }],
    });
    expect(secondOut).toMatchObject({ iteration: 1, assistantTexts: ["They say hi."] });
    expect(typeof (secondOut!.usage as { input?: unknown }).input).toBe("number");
    expect(secondIn!.provider).toBe("scripted");
  });
});

describe("the whole loop with the AI SDK, one run", () => {
  it("asks before_agent_reply once however many model calls the run makes", async () => {
    const p = await pipeline([doorman]);
    const { base, model } = hookbusScriptedModel([{ text: "first" }, { text: "second" }]);
    const runId = "ai-two-calls";
    const texts = await ai.withHookbusRun(
      { client: p.client, agentId: "app", sessionKey: "s-two-calls", runId },
      async () => [
        (await generateText({ model, prompt: "plan it" })).text,
        (await generateText({ model, prompt: "hello, now answer" })).text,
      ],
    );
    // The second call's prompt would have been answered by the doorman: it was not asked again.
    expect(texts).toEqual(["first", "second"]);
    expect(base.doGenerateCalls).toHaveLength(2);
    const asked = await recordsOf<DecisionRecord>(p, "decision", "before_agent_reply", runId, 1);
    expect(asked.map((r) => r.event)).toEqual([{ cleanedBody: "plan it" }]);
  });

  it("agentReply: false leaves before_agent_reply to the app: the model answers", async () => {
    const p = await pipeline([doorman]);
    const { base, model } = hookbusScriptedModel([{ text: "the model's own answer" }]);
    const text = await ai.withHookbusRun(
      { client: p.client, agentId: "app", sessionKey: "s-off", agentReply: false },
      async () => (await generateText({ model, prompt: "hello there" })).text,
    );
    expect(text).toBe("the model's own answer");
    expect(base.doGenerateCalls).toHaveLength(1);
  });

  it("an observation the log never takes neither delays nor fails the model call", async () => {
    // No policy anywhere (every decision is local); the log hangs on llm_input, refuses the rest.
    const client = HookbusClient.create({
      transport: { call: () => Promise.reject(new Error("no call expected")) },
      registry: staticRegistryView(new RegistrySnapshot(1, { policies: [] })),
      observer: {
        publish: (hook) =>
          hook === "llm_input" ? new Promise(() => {}) : Promise.reject(new Error("log away")),
      },
    });
    const warn = vi.spyOn(client.log, "warn");
    const { base, model } = hookbusScriptedModel([{ text: "answered" }]);
    const text = await ai.withHookbusRun(
      { client, agentId: "app", sessionKey: "s-no-log" },
      async () => (await generateText({ model, prompt: "hi" })).text,
    );
    expect(text).toBe("answered");
    expect(base.doGenerateCalls).toHaveLength(1);
    await until(
      () => warn.mock.calls.some((args) => (args[0] as { hook?: string }).hook === "llm_output"),
      5000,
      "the lost llm_output logged",
    );
  });
});
