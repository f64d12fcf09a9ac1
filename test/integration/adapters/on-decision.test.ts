/**
 * `onDecision` (issue 22): every hookbus decision an adapter obtains in a run reaches the app once,
 * frozen, with the hook, the tool call and who decided; a callback that throws or tries to change
 * the decision changes nothing. Through the real AI SDK and OpenAI Agents SDK, with a scripted
 * model, on real NATS with a coordinator and policy workers.
 */
import { Agent, Runner, setTracingDisabled } from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { generateText, stepCountIs } from "ai";
import { describe, expect, it, vi } from "vitest";
import * as ai from "../../../src/adapters/ai/index.js";
import * as agents from "../../../src/adapters/openai-agents/index.js";
import type { HookbusDecisionEvent } from "../../../src/adapters/ai/index.js";
import { isHookbusError } from "../../../src/index.js";
import { rejection, until } from "../../support/wait.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { basePolicies, blockSecrets, EMAIL, hideDeleteAll, pipelineOn } from "./policies.js";
import { hookbusScriptedModel, type ScriptedStep } from "./scripted-model.js";
import { agentsRecordingTools } from "./agents-tools.js";
import { aiRecordingTools } from "./ai-tools.js";

const nats = useNatsServer();
const pipeline = pipelineOn(nats);
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });

const aiModel = (steps: ScriptedStep[]) => hookbusScriptedModel(steps).model;

const of = (events: HookbusDecisionEvent[], hook: string) => events.filter((e) => e.hook === hook);

/** The decisions the acceptance run (block exec, rewrite read_file, redact the answer) reports. */
function expectAcceptanceDecisions(events: HookbusDecisionEvent[], sessionKey: string): void {
  const toolCalls = of(events, "before_tool_call");
  expect(toolCalls.map((e) => [e.toolName, e.toolCallId, e.decision.outcome])).toEqual([
    ["exec", "c-exec", "block"],
    ["read_file", "c-read", "modify"],
  ]);
  expect(toolCalls[0]!.decision).toMatchObject({
    blockedBy: "no-exec",
    blockReason: "exec is not allowed",
  });
  expect(toolCalls[0]!.source).toBe("coordinator");
  expect(toolCalls[0]!.callId).toEqual(expect.any(String));
  expect(toolCalls[1]!.decision.decidedBy).toMatchObject({ params: ["safe-path"] });
  // No policy on before_tool_result: allowed locally, and still reported.
  expect(of(events, "before_tool_result").map((e) => [e.toolName, e.source])).toEqual([
    ["read_file", "fast-path"],
  ]);
  const emits = of(events, "before_response_emit");
  expect(emits).toHaveLength(1);
  expect(emits[0]!.decision).toMatchObject({
    outcome: "modify",
    decidedBy: { content: ["redact-email"] },
  });
  expect(of(events, "before_llm_call")).toHaveLength(3);
  expect(of(events, "after_llm_call").length).toBeGreaterThanOrEqual(2);
  for (const event of events) {
    expect(event.context).toMatchObject({ agentId: "app", sessionKey });
    expect(Object.isFrozen(event) && Object.isFrozen(event.decision)).toBe(true);
  }
}

const acceptanceCalls = [
  { id: "c-exec", name: "exec", input: { command: "rm -rf /" } },
  { id: "c-read", name: "read_file", input: { path: "/etc/passwd" } },
];

describe("onDecision with the AI SDK", () => {
  it("reports each decision once: the block by no-exec, the rewrite, the redaction", async () => {
    const p = await pipeline();
    const { ran, tools } = aiRecordingTools(["exec", "read_file", "delete_all"]);
    const events: HookbusDecisionEvent[] = [];
    const result = await ai.withHookbusRun(
      {
        client: p.client,
        agentId: "app",
        sessionKey: "s-ai",
        onDecision: (e) => void events.push(e),
      },
      () =>
        generateText({
          model: aiModel([
            { calls: [acceptanceCalls[0]!] },
            { calls: [acceptanceCalls[1]!] },
            { text: `Mail ${EMAIL}.` },
          ]),
          tools,
          prompt: "clean up",
          stopWhen: stepCountIs(5),
        }),
    );
    expect(result.text).toBe("Mail [email].");
    expect(ran.exec).toEqual([]);
    expectAcceptanceDecisions(events, "s-ai");
  });

  it("a callback that throws or tries to undo a redaction changes nothing, and is logged", async () => {
    const p = await pipeline([...basePolicies, hideDeleteAll]);
    const { ran, tools } = aiRecordingTools(["exec", "read_file", "delete_all"]);
    const warn = vi.spyOn(p.client.log, "warn");
    const seen: string[] = [];
    const result = await ai.withHookbusRun(
      {
        client: p.client,
        agentId: "app",
        sessionKey: "s-ai-throws",
        onDecision: (event) => {
          seen.push(`${event.hook}:${event.source}`);
          if (event.hook === "before_response_emit") {
            // Frozen: this assignment throws in strict mode (modules are strict).
            (event.decision as { content?: string }).content = `Mail ${EMAIL}.`;
          }
          if (event.hook === "before_tool_call") throw new Error("app bug");
        },
      },
      () =>
        generateText({
          model: aiModel([
            { calls: [{ id: "c-del", name: "delete_all", input: {} }] },
            { text: `Mail ${EMAIL}.` },
          ]),
          tools,
          prompt: "clean up",
          stopWhen: stepCountIs(4),
        }),
    );
    expect(result.text).toBe("Mail [email].");
    expect(ran.delete_all).toEqual([]);
    // The tool the model was not offered is refused by the adapter, and reported as such.
    expect(seen).toContain("before_tool_call:adapter");
    expect(seen).toContain("before_response_emit:coordinator");
    const logged = warn.mock.calls.map((args) => (args[0] as { hook?: string }).hook);
    expect(logged).toEqual(["before_tool_call", "before_response_emit"]);
  });
});

describe("onDecision with the OpenAI Agents SDK", () => {
  it("reports each decision once: the block by no-exec, the rewrite, the redaction", async () => {
    const p = await pipeline();
    const { ran, tools } = agentsRecordingTools(["exec", "read_file"]);
    const model = agents.hookbusModel(
      new ScriptedModel([
        [functionCall("exec", { command: "rm -rf /" }, { callId: "c-exec" })],
        [functionCall("read_file", { path: "/etc/passwd" }, { callId: "c-read" })],
        [assistantMessage(`Mail ${EMAIL}.`)],
      ]),
      { name: "scripted-1", provider: "scripted" },
    );
    const events: HookbusDecisionEvent[] = [];
    const result = await agents.withHookbusRun(
      {
        client: p.client,
        agentId: "app",
        sessionKey: "s-agents",
        onDecision: (e) => void events.push(e),
      },
      () =>
        runner.run(
          new Agent({ name: "assistant", instructions: "Help.", model, tools }),
          "clean up",
        ),
    );
    expect(result.finalOutput).toBe("Mail [email].");
    expect(ran.exec).toEqual([]);
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    expectAcceptanceDecisions(events, "s-agents");
  });
});

/** The agent_end observations of one session, once `count` are in the log. */
function agentEnds(p: Pipeline, sessionKey: string, count: number) {
  return until(
    async () => {
      const ends = (await p.readLog())
        .map((s) => s.record)
        .flatMap((r) =>
          r.kind === "observation" && r.hook === "agent_end" && r.context.sessionKey === sessionKey
            ? [r.event]
            : [],
        );
      return ends.length >= count ? ends : undefined;
    },
    5000,
    `${count} agent_end observations of ${sessionKey}`,
  );
}

describe("withHookbusRun observes agent_end", () => {
  it("a run that answers ends with success; a blocked answer ends with its error; opting out records none", async () => {
    const p = await pipeline([...basePolicies, blockSecrets]);
    const ctx = (sessionKey: string, agentEnd?: boolean) => ({
      client: p.client,
      agentId: "app",
      sessionKey,
      ...(agentEnd === undefined ? {} : { agentEnd }),
    });
    // Opted out first: once the later runs' agent_end are in, its own would be too.
    await ai.withHookbusRun(ctx("s-end-off", false), () =>
      generateText({ model: aiModel([{ text: "quiet" }]), prompt: "hi" }),
    );
    await ai.withHookbusRun(ctx("s-end-ok"), () =>
      generateText({ model: aiModel([{ text: "hello" }]), prompt: "hi" }),
    );
    const failed = await rejection(
      ai.withHookbusRun(ctx("s-end-fail"), () =>
        generateText({ model: aiModel([{ text: "The SECRET is 42." }]), prompt: "hi" }),
      ),
    );
    expect(isHookbusError(failed, "HOOKBUS_BLOCKED")).toBe(true);
    const ok = await agentEnds(p, "s-end-ok", 1);
    expect(ok).toHaveLength(1);
    expect(ok[0]).toMatchObject({ success: true });
    expect(typeof (ok[0] as { durationMs?: unknown }).durationMs).toBe("number");
    const [ended] = await agentEnds(p, "s-end-fail", 1);
    expect(ended).toMatchObject({ success: false });
    expect(String((ended as { error?: string }).error)).toContain("the answer carries a secret");
    const all = (await p.readLog()).map((s) => s.record);
    expect(
      all.some(
        (r) =>
          r.kind === "observation" &&
          r.context.sessionKey === "s-end-off" &&
          r.hook === "agent_end",
      ),
    ).toBe(false);
  });
});
