/**
 * `hookbus/openai-agents` against the real `@openai/agents` Runner, Agent and tool(), with the
 * SDK's own ScriptedModel (offline), on real NATS with a coordinator and policy workers
 * (issue 13). Tracing is off (the Runner's `tracingDisabled` and setTracingDisabled).
 */
import { Agent, Runner, setTracingDisabled, tool, type RunResult } from "@openai/agents";
import {
  assistantMessage,
  functionCall,
  ScriptedModel,
  type ScriptedModelInput,
} from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { definePolicy, isHookbusError } from "../../../src/index.js";
import {
  hookbusModel,
  hookbusTool,
  INPUT_GUARDRAIL_NAME,
  withHookbusRun,
} from "../../../src/adapters/openai-agents/index.js";
import { gate, rejection } from "../../support/wait.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import {
  basePolicies,
  beforeToolCallRecords,
  blockSecrets,
  EMAIL,
  hideDeleteAll,
  pipelineOn,
} from "./policies.js";
import { agentsRecordingTools, type AgentsRecordingTools } from "./agents-tools.js";

const nats = useNatsServer();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });

const pipeline = pipelineOn(nats);

function agent(steps: ScriptedModelInput[], tools: AgentsRecordingTools["tools"] = []) {
  const base = new ScriptedModel(steps);
  const model = hookbusModel(base, { name: "scripted-1", provider: "scripted" });
  return { base, agent: new Agent({ name: "assistant", instructions: "Help.", model, tools }) };
}

const call = (name: string, args: Record<string, unknown>, callId: string) =>
  functionCall(name, args, { callId });

const fourLookups = ["a", "b", "c", "d"].map((w, i) =>
  call("lookup", { word: w }, `call-${i + 1}`),
);

/** What each tool call of the run returned to the model, by call id. */
function toolOutputs(result: Pick<RunResult<never, never>, "newItems">): Record<string, string> {
  const outputs: Record<string, string> = {};
  for (const item of result.newItems) {
    if (item.type !== "tool_call_output_item") continue;
    const raw = item.rawItem as { callId?: string };
    outputs[raw.callId ?? "?"] = String(item.output);
  }
  return outputs;
}

const session = (p: Pipeline, sessionKey: string, runId?: string) => ({
  client: p.client,
  agentId: "openai-agent",
  sessionKey,
  ...(runId === undefined ? {} : { runId }),
});

describe("hookbus/openai-agents with Runner.run", () => {
  it("a plain answer: the user sees the redacted text; the decision is in the log", async () => {
    const p = await pipeline();
    const { agent: a } = agent([[assistantMessage(`Write to ${EMAIL} for help.`)]]);
    const result = await withHookbusRun(session(p, "s-text"), () => runner.run(a, "who can help?"));
    expect(result.finalOutput).toBe("Write to [email] for help.");
    expect(JSON.stringify(result.newItems)).not.toContain(EMAIL);
    const emits = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "decision" && r.hook === "before_response_emit");
    expect(emits).toHaveLength(1);
    expect(emits[0]!.context).toMatchObject({ agentId: "openai-agent", sessionKey: "s-text" });
  });

  it("before_llm_call replaces the conversation and the instructions the model gets", async () => {
    const scrubPrompt = definePolicy({
      name: "scrub-prompt",
      hooks: {
        before_llm_call: (event) =>
          JSON.stringify(event.messages).includes(EMAIL)
            ? {
                messages: [{ role: "user", content: "[prompt withheld]" }],
                systemPrompt: "Answer briefly.",
              }
            : undefined,
      },
    });
    const p = await pipeline([...basePolicies, scrubPrompt]);
    const { agent: a, base } = agent([[assistantMessage("ok")]]);
    await withHookbusRun(session(p, "s-prompt"), () => runner.run(a, `mail ${EMAIL}`));
    const request = base.calls[0]!.request;
    expect(request.input).toEqual([{ role: "user", content: "[prompt withheld]" }]);
    expect(request.systemInstructions).toBe("Answer briefly.");
  });

  it("a blocked final answer fails the run with the block; nothing of it is returned", async () => {
    const p = await pipeline([...basePolicies, blockSecrets]);
    const { agent: a } = agent([[assistantMessage("The SECRET is 42.")]]);
    const error = await withHookbusRun(session(p, "s-block"), () =>
      rejection(runner.run(a, "tell me")),
    );
    expect(isHookbusError(error, "HOOKBUS_BLOCKED"), String(error)).toBe(true);
    expect(String(error)).toContain("the answer carries a secret");
  });

  it("blocks exec (its execute never runs; the model reads the block), rewrites read_file's path, multi-turn", async () => {
    const p = await pipeline();
    const { ran, tools } = agentsRecordingTools();
    const { agent: a, base } = agent(
      [
        [call("exec", { command: "rm -rf /" }, "c-exec")],
        [call("read_file", { path: "/etc/passwd" }, "c-read")],
        [assistantMessage(`Done; mail ${EMAIL}.`)],
      ],
      tools,
    );
    const result = await withHookbusRun(session(p, "s-tools"), () =>
      runner.run(a, "clean up", { maxTurns: 5 }),
    );
    expect(ran.exec).toEqual([]);
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    expect(result.finalOutput).toBe("Done; mail [email].");
    const outputs = toolOutputs(result);
    expect(outputs["c-exec"]).toContain("exec is not allowed");
    expect(outputs["c-read"]).toBe("contents of /tmp/sandbox/file");
    // The block reached the model as the exec call's output, through the SDK's input guardrail.
    expect(JSON.stringify(base.calls[1]!.request.input)).toContain("exec is not allowed");
    const rejected = result.toolInputGuardrailResults.filter(
      (r) => r.output.behavior.type === "rejectContent",
    );
    expect(rejected.map((r) => r.guardrail.name)).toEqual([INPUT_GUARDRAIL_NAME]);
    // The tool that ran is observed with the params it ran with.
    const observed = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "observation" && r.hook === "after_tool_call")
      .map((r) => (r.kind === "observation" ? r.event : {}));
    expect(observed).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ toolName: "read_file", params: { path: "/tmp/sandbox/file" } }),
        expect.objectContaining({ toolName: "exec", blocked: true }),
      ]),
    );
  });

  it("four parallel calls with at most 3 per turn: the fourth never runs and has no before_tool_call record", async () => {
    const p = await pipeline();
    const { ran, tools } = agentsRecordingTools();
    const { agent: a } = agent([fourLookups, [assistantMessage("three found")]], tools);
    const result = await withHookbusRun(session(p, "s-four"), () =>
      runner.run(a, "look up a b c d", { maxTurns: 3 }),
    );
    expect(ran.lookup).toEqual(
      expect.arrayContaining([{ word: "a" }, { word: "b" }, { word: "c" }]),
    );
    expect(ran.lookup).toHaveLength(3);
    expect(toolOutputs(result)["call-4"]).toMatch(/HOOKBUS_BLOCKED|after_llm_call/);
    const records = await beforeToolCallRecords(p);
    expect(records.map((r) => r.context.toolCallId).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("a tool removed by before_llm_call is not offered, and its call is still refused when executed", async () => {
    const p = await pipeline([...basePolicies, hideDeleteAll]);
    const { ran, tools } = agentsRecordingTools();
    const { agent: a, base } = agent(
      [[call("delete_all", {}, "c-del")], [assistantMessage("ok")]],
      tools,
    );
    const result = await withHookbusRun(session(p, "s-narrow"), () =>
      runner.run(a, "delete", { maxTurns: 3 }),
    );
    const offered = base.calls[0]!.request.tools.map((t) => t.name).sort();
    expect(offered).toEqual(["exec", "lookup", "read_file"]);
    expect(ran.delete_all).toEqual([]);
    expect(toolOutputs(result)["c-del"]).toContain("was not offered");
  });

  it("a coordinator that is down fails the tool gates closed: no tool runs", async () => {
    // A short deadline: the client retries a call until its deadline in case a coordinator returns.
    const p = await pipeline(basePolicies, 1500);
    const { ran, tools } = agentsRecordingTools();
    const { agent: a, base } = agent([fourLookups, [assistantMessage("done")]], tools);
    await p.coordinator.stop();
    const error = await withHookbusRun(session(p, "s-down"), () =>
      rejection(runner.run(a, "look up", { maxTurns: 3 })),
    );
    expect(ran.lookup).toEqual([]);
    // Each call's refusal reached the model as its output...
    const outputs = (base.calls[1]?.request.input ?? []) as { type?: string; output?: unknown }[];
    const refusals = outputs.filter((item) => item.type === "function_call_result");
    expect(refusals).toHaveLength(4);
    for (const r of refusals)
      expect(JSON.stringify(r.output)).toMatch(/after_llm_call did not decide/);
    // ...and the final answer, which no policy could check, failed the run (fail closed).
    expect(isHookbusError(error), String(error)).toBe(true);
  });

  it("two sessions reusing a run id stay isolated (one's allowlist never applies to, or is cleared by, the other)", async () => {
    const p = await pipeline();
    const a = agentsRecordingTools();
    const b = agentsRecordingTools();
    const bDone = gate();
    // Session A's tool gates are asked only after session B's whole run is over (a guardrail of
    // A's own runs before hookbus's): with a shared gate, B's before_llm_call would clear A's.
    const slowLookup = hookbusTool(
      tool({
        name: "lookup",
        description: "Look a word up",
        parameters: z.object({ word: z.string() }),
        inputGuardrails: [
          {
            name: "wait for B",
            run: async () => {
              await bDone.promise;
              return { behavior: { type: "allow" } };
            },
          },
        ],
        execute: (input) => {
          a.ran.lookup.push(input);
          return "found";
        },
      }),
    );
    const agentA = agent([fourLookups, [assistantMessage("a done")]], [slowLookup]).agent;
    const agentB = agent(
      [[call("lookup", { word: "z" }, "b-call-1")], [assistantMessage("b done")]],
      b.tools,
    ).agent;
    const runA = withHookbusRun(session(p, "conv-a", "run-7"), () =>
      runner.run(agentA, "a", { maxTurns: 3 }),
    );
    await withHookbusRun(session(p, "conv-b", "run-7"), () =>
      runner.run(agentB, "b", { maxTurns: 3 }),
    );
    bDone.open();
    await runA;
    expect(b.ran.lookup).toEqual([{ word: "z" }]);
    expect(a.ran.lookup).toHaveLength(3);
    const ids = (await beforeToolCallRecords(p)).map((r) => r.context.toolCallId).sort();
    expect(ids).toEqual(["b-call-1", "call-1", "call-2", "call-3"]);
  });

  it("a tool whose hookbus guardrails were removed is still gated by its invoke (block and rewrite)", async () => {
    const p = await pipeline();
    const { ran, tools } = agentsRecordingTools();
    const stripped = tools.map((t) => ({ ...t, inputGuardrails: [], outputGuardrails: [] }));
    const { agent: a } = agent(
      [
        [
          call("exec", { command: "rm -rf /" }, "c-exec"),
          call("read_file", { path: "/etc/passwd" }, "c-read"),
        ],
        [assistantMessage("done")],
      ],
      stripped,
    );
    const result = await withHookbusRun(session(p, "s-stripped"), () =>
      runner.run(a, "clean up", { maxTurns: 3 }),
    );
    expect(ran.exec).toEqual([]);
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    expect(toolOutputs(result)["c-exec"]).toContain("exec is not allowed");
  });

  it("before_tool_result replaces what the model reads of a tool's output", async () => {
    const redactResult = definePolicy({
      name: "redact-result",
      hooks: {
        before_tool_result: (event) =>
          JSON.stringify(event.result).includes("@") ? { content: "[redacted result]" } : undefined,
      },
    });
    const p = await pipeline([...basePolicies, redactResult]);
    const mailbox = hookbusTool(
      tool({
        name: "lookup",
        description: "Look a word up",
        parameters: z.object({ word: z.string() }),
        execute: () => `owner: ${EMAIL}`,
      }),
    );
    const { agent: a, base } = agent(
      [[call("lookup", { word: "owner" }, "c-owner")], [assistantMessage("found")]],
      [mailbox],
    );
    const result = await withHookbusRun(session(p, "s-result"), () =>
      runner.run(a, "who owns it?", { maxTurns: 3 }),
    );
    expect(toolOutputs(result)["c-owner"]).toBe("[redacted result]");
    expect(JSON.stringify(base.calls[1]!.request.input)).not.toContain(EMAIL);
  });

  it("a handoff goes through the tool gates: allowed, it hands off; not offered, the run fails before it", async () => {
    const hideBilling = definePolicy({
      name: "hide-billing",
      hooks: {
        before_llm_call: (event) => ({
          tools: (event.tools ?? []).filter(
            (t) => !("name" in t) || t.name !== "transfer_to_billing",
          ),
        }),
      },
    });
    const triage = (billingModel: ScriptedModel) => {
      const billing = new Agent({
        name: "billing",
        model: hookbusModel(billingModel),
      });
      const base = new ScriptedModel([
        [call("transfer_to_billing", {}, "c-handoff")],
        [assistantMessage("not handed off")],
      ]);
      return new Agent({ name: "triage", model: hookbusModel(base), handoffs: [billing] });
    };

    const open = await pipeline();
    const billingAnswers = new ScriptedModel([[assistantMessage("billing here")]]);
    const handedOff = await withHookbusRun(session(open, "s-handoff"), () =>
      runner.run(triage(billingAnswers), "refund", { maxTurns: 4 }),
    );
    expect(handedOff.finalOutput).toBe("billing here");
    const ids = (await beforeToolCallRecords(open)).map((r) => r.context.toolCallId);
    expect(ids).toEqual(["c-handoff"]);

    const narrowed = await pipeline([...basePolicies, hideBilling]);
    const billingNever = new ScriptedModel([[assistantMessage("billing here")]]);
    const error = await withHookbusRun(session(narrowed, "s-no-handoff"), () =>
      rejection(runner.run(triage(billingNever), "refund", { maxTurns: 4 })),
    );
    expect(isHookbusError(error, "HOOKBUS_BLOCKED"), String(error)).toBe(true);
    expect(String(error)).toContain("was not offered");
    expect(billingNever.calls).toHaveLength(0);
  });

  it("outside a run, the model refuses (HOOKBUS_NO_RUN) and no tool executes", async () => {
    const { ran, tools } = agentsRecordingTools();
    const { agent: a } = agent([[call("lookup", { word: "x" }, "c1")]], tools);
    const error = await rejection(runner.run(a, "x"));
    expect(isHookbusError(error, "HOOKBUS_NO_RUN"), String(error)).toBe(true);
    expect(ran.lookup).toEqual([]);
  });
});

describe("hookbus/openai-agents with a streamed run", () => {
  it("tool calls are held until after_llm_call decided; the stream shows only the redacted final text", async () => {
    const p = await pipeline();
    const { ran, tools } = agentsRecordingTools();
    // The final answer comes in two text parts (two deltas), the email split across them.
    const answer = {
      ...assistantMessage("Contact alice@"),
      content: [
        { type: "output_text" as const, text: "Contact alice@" },
        { type: "output_text" as const, text: "example.com now." },
      ],
    };
    const { agent: a } = agent([fourLookups, [answer]], tools);
    const { chunks, finalOutput } = await withHookbusRun(session(p, "s-stream"), async () => {
      const result = await runner.run(a, "look up", { stream: true, maxTurns: 3 });
      const chunks: string[] = [];
      for await (const chunk of result.toTextStream()) chunks.push(chunk);
      await result.completed;
      return { chunks, finalOutput: result.finalOutput };
    });
    expect(ran.lookup).toHaveLength(3);
    expect(chunks).toEqual(["Contact [email] now."]);
    expect(finalOutput).toBe("Contact [email] now.");
    const records = await beforeToolCallRecords(p);
    expect(records.map((r) => r.context.toolCallId).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("a blocked final answer is never streamed: the stream fails with the block", async () => {
    const p = await pipeline([...basePolicies, blockSecrets]);
    const { agent: a } = agent([[assistantMessage("The SECRET is 42.")]]);
    const chunks: string[] = [];
    const thrown = await withHookbusRun(session(p, "s-stream-block"), async () => {
      const result = await runner.run(a, "tell me", { stream: true });
      try {
        for await (const chunk of result.toTextStream()) chunks.push(chunk);
        await result.completed;
        return result.error ?? undefined;
      } catch (error) {
        return error;
      }
    });
    expect(isHookbusError(thrown, "HOOKBUS_BLOCKED"), String(thrown)).toBe(true);
    expect(chunks).toEqual([]);
  });
});
