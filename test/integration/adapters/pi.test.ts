/**
 * `hookbus/pi` against the real `@mariozechner/pi-agent-core` Agent, with pi-ai's own faux
 * provider as the scripted model (offline, through pi's stream function types), on real NATS with
 * a coordinator and policy workers (issue 13).
 *
 * The policies are the acceptance matrix (./policies.ts).
 */
import {
  Agent,
  type AgentEvent,
  type AgentTool,
  type BeforeToolCallContext,
} from "@mariozechner/pi-agent-core";
import { Type } from "@mariozechner/pi-ai";
import { describe, expect, it } from "vitest";
import { definePolicy, type Policy } from "../../../src/index.js";
import {
  attachHookbus,
  withHookbusRun,
  type HookbusDecisionEvent,
} from "../../../src/adapters/pi/index.js";
import { gate, until } from "../../support/wait.js";
import { useNatsServer } from "../pipeline/harness.js";
import {
  basePolicies,
  beforeToolCallRecords,
  blockSecrets,
  EMAIL,
  hideDeleteAll,
  policyPipeline,
} from "./policies.js";
import { useScriptedPiModels, type PiStep } from "./pi-model.js";

const nats = useNatsServer();

const pipeline = (policies?: Policy[], clientTimeoutMs?: number) =>
  policyPipeline(nats.url(), policies, clientTimeoutMs);

const scriptedModel = useScriptedPiModels();

type Ran = Record<"exec" | "read_file" | "lookup" | "delete_all", unknown[]>;

function textTool(
  name: keyof Ran,
  ran: Ran,
  param: string,
  answer: (params: Record<string, string>) => Promise<string> | string,
): AgentTool {
  return {
    name,
    label: name,
    description: `the ${name} tool`,
    parameters: Type.Object({ [param]: Type.String() }),
    execute: async (_id, input) => {
      const params = input as Record<string, string>;
      const text = await answer(params);
      ran[name].push(params);
      return { content: [{ type: "text", text }], details: {} };
    },
  };
}

/** The tools, each recording the params it actually ran with. */
function recordingTools(lookup: (word: string) => Promise<void> | void = () => {}) {
  const ran: Ran = { exec: [], read_file: [], lookup: [], delete_all: [] };
  const tools = [
    textTool("exec", ran, "command", () => "ran"),
    textTool("read_file", ran, "path", (p) => `contents of ${p.path}`),
    textTool("lookup", ran, "word", async (p) => {
      await lookup(p.word!);
      return `${p.word}: found`;
    }),
    textTool("delete_all", ran, "reason", () => "deleted"),
  ];
  return { ran, tools };
}

/** A pi Agent with hookbus attached, and every event it emitted (what a UI would show). */
function piAgent(steps: PiStep[], tools: AgentTool[] = recordingTools().tools) {
  const { model, seen } = scriptedModel(steps);
  const agent = new Agent({ initialState: { model, systemPrompt: "You help.", tools } });
  attachHookbus(agent);
  const events: AgentEvent[] = [];
  agent.subscribe((event) => void events.push(event));
  return { agent, seen, events };
}

function assistantTexts(events: AgentEvent[]): string[] {
  return events.flatMap((e) =>
    e.type === "message_end" && e.message.role === "assistant"
      ? [e.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")]
      : [],
  );
}

function toolResults(agent: Agent) {
  return agent.state.messages.flatMap((m) => (m.role === "toolResult" ? [m] : []));
}

function resultText(result: { content: { type: string; text?: string }[] }): string {
  return result.content.map((b) => b.text ?? "").join("");
}

const fourLookups: PiStep = {
  calls: ["a", "b", "c", "d"].map((word, i) => ({
    id: `call-${i + 1}`,
    name: "lookup",
    args: { word },
  })),
};

describe("hookbus/pi on a pi Agent", () => {
  it("onDecision gets each decision of the run once, frozen: the redaction names its policy", async () => {
    const p = await pipeline();
    const { agent } = piAgent([{ text: `Write to ${EMAIL} for help.` }]);
    const seen: HookbusDecisionEvent[] = [];
    await withHookbusRun(
      {
        client: p.client,
        agentId: "pi-agent",
        sessionKey: "s-decisions",
        onDecision: (e) => void seen.push(e),
      },
      () => agent.prompt("who can help?"),
    );
    // before_agent_reply has no policy here: allowed locally (fast path), and still reported.
    expect(seen.map((e) => e.hook)).toEqual([
      "before_agent_reply",
      "before_llm_call",
      "after_llm_call",
      "before_response_emit",
    ]);
    expect(seen[0]!.source).toBe("fast-path");
    expect(seen[3]!.decision).toMatchObject({
      outcome: "modify",
      decidedBy: { content: ["redact-email"] },
    });
    expect(seen.every((e) => Object.isFrozen(e.decision))).toBe(true);
  });

  it("a plain answer: the user sees only the redacted text; the decision is in the log", async () => {
    const p = await pipeline();
    const { agent, events } = piAgent([{ text: `Write to ${EMAIL} for help.` }]);
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-text" }, () =>
      agent.prompt("who can help?"),
    );
    expect(agent.state.errorMessage).toBeUndefined();
    expect(assistantTexts(events)).toEqual(["Write to [email] for help."]);
    // No event (no message_update delta either) ever carried the model's own text.
    expect(JSON.stringify(events)).not.toContain(EMAIL);
    expect(events.some((e) => e.type === "message_update")).toBe(false);
    expect(JSON.stringify(agent.state.messages)).not.toContain(EMAIL);
    const emits = (await p.readLog())
      .map((s) => s.record)
      .filter((r) => r.kind === "decision" && r.hook === "before_response_emit");
    expect(emits).toHaveLength(1);
    expect(emits[0]!.context).toMatchObject({ agentId: "pi-agent", sessionKey: "s-text" });
  });

  it("blocks exec (its execute never runs; the model reads the block), rewrites read_file's path", async () => {
    const p = await pipeline();
    const { ran, tools } = recordingTools();
    const { agent, seen, events } = piAgent(
      [
        { calls: [{ id: "c-exec", name: "exec", args: { command: "rm -rf /" } }] },
        { calls: [{ id: "c-read", name: "read_file", args: { path: "/etc/passwd" } }] },
        { text: `Done; mail ${EMAIL}.` },
      ],
      tools,
    );
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-tools" }, () =>
      agent.prompt("clean up"),
    );
    expect(agent.state.errorMessage).toBeUndefined();
    expect(ran.exec).toEqual([]);
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    const [execResult, readResult] = toolResults(agent);
    expect(execResult).toMatchObject({ toolCallId: "c-exec", isError: true });
    expect(resultText(execResult!)).toContain("exec is not allowed");
    // The block reached the model as the exec call's error result.
    expect(JSON.stringify(seen[1]!.messages)).toContain("exec is not allowed");
    expect(readResult).toMatchObject({ toolCallId: "c-read", isError: false });
    expect(resultText(readResult!)).toBe("contents of /tmp/sandbox/file");
    expect(assistantTexts(events).at(-1)).toBe("Done; mail [email].");
    expect(JSON.stringify(events)).not.toContain(EMAIL);
    // The transcript keeps the model's own arguments; only the tool got the rewrite.
    expect(JSON.stringify(agent.state.messages)).toContain('"path":"/etc/passwd"');
    // after_tool_call is observed for the refused call and for the one that ran (rewritten).
    const observed = await until(
      async () => {
        const all = (await p.readLog()).map((s) => s.record);
        const found = all.flatMap((r) =>
          r.kind === "observation" && r.hook === "after_tool_call" ? [r.event] : [],
        );
        return found.length >= 2 ? found : undefined;
      },
      20_000,
      "the after_tool_call records",
    );
    expect(observed.sort((a, b) => String(a.toolName).localeCompare(String(b.toolName)))).toEqual([
      expect.objectContaining({ toolName: "exec", toolCallId: "c-exec", blocked: true }),
      expect.objectContaining({
        toolName: "read_file",
        toolCallId: "c-read",
        params: { path: "/tmp/sandbox/file" },
      }),
    ]);
  });

  it("four parallel calls with at most 3 per turn: three run at once, the fourth never runs and has no before_tool_call record", async () => {
    const p = await pipeline();
    let running = 0;
    // Each allowed lookup waits until three run at the same time: pi really ran them in parallel.
    const { ran, tools } = recordingTools(async () => {
      running++;
      await until(() => running >= 3, 10_000, "three lookups running at once");
    });
    const { agent } = piAgent([fourLookups, { text: "three found" }], tools);
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-four" }, () =>
      agent.prompt("look up a b c d"),
    );
    expect(agent.toolExecution).toBe("parallel");
    expect(ran.lookup).toHaveLength(3);
    expect(ran.lookup).toEqual(
      expect.arrayContaining([{ word: "a" }, { word: "b" }, { word: "c" }]),
    );
    const results = toolResults(agent);
    expect(results.filter((r) => r.isError).map((r) => r.toolCallId)).toEqual(["call-4"]);
    expect(resultText(results[3]!)).toContain("after_llm_call");
    const records = await beforeToolCallRecords(p);
    expect(records.map((r) => r.context.toolCallId).sort()).toEqual(["call-1", "call-2", "call-3"]);
  });

  it("a tool removed by before_llm_call is not offered, and its call is still refused when executed", async () => {
    const p = await pipeline([...basePolicies, hideDeleteAll]);
    const { ran, tools } = recordingTools();
    const { agent, seen } = piAgent(
      [{ calls: [{ id: "c-del", name: "delete_all", args: { reason: "x" } }] }, { text: "ok" }],
      tools,
    );
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-narrow" }, () =>
      agent.prompt("delete"),
    );
    expect(seen[0]!.tools.sort()).toEqual(["exec", "lookup", "read_file"]);
    expect(ran.delete_all).toEqual([]);
    const [refused] = toolResults(agent);
    expect(refused).toMatchObject({ toolCallId: "c-del", isError: true });
    expect(resultText(refused!)).toContain("was not offered");
  });

  it("a coordinator that is down fails the tool gates closed (no tool runs) and the final answer too", async () => {
    // A short deadline: the client retries a call until its deadline in case a coordinator returns.
    const p = await pipeline(basePolicies, 1500);
    const { ran, tools } = recordingTools();
    const { agent, events } = piAgent([fourLookups, { text: `Ask ${EMAIL}.` }], tools);
    await p.coordinator.stop();
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-down" }, () =>
      agent.prompt("look up"),
    );
    expect(ran.lookup).toEqual([]);
    const results = toolResults(agent);
    expect(results).toHaveLength(4);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(/after_llm_call did not decide/);
    }
    // before_response_emit could not decide either: the answer is an error, never shown.
    expect(agent.state.errorMessage).toMatch(/^HOOKBUS_/);
    expect(JSON.stringify(events)).not.toContain(EMAIL);
  });

  it("two sessions reusing a run id stay isolated (one's allowlist never applies to, or is cleared by, the other)", async () => {
    const p = await pipeline();
    const bDone = gate();
    // Session A runs its tools one by one and its first waits until session B's run is over, so
    // A's later calls are checked after B's before_llm_call (which, with a shared gate, cleared
    // A's allowlist and let the fourth call run).
    const a = recordingTools(async (word) => {
      if (word === "a") await bDone.promise;
    });
    const b = recordingTools();
    const agentA = piAgent([fourLookups, { text: "a done" }], a.tools).agent;
    agentA.toolExecution = "sequential";
    const agentB = piAgent(
      [{ calls: [{ id: "b-call-1", name: "lookup", args: { word: "z" } }] }, { text: "b done" }],
      b.tools,
    ).agent;
    const runA = withHookbusRun(
      { client: p.client, agentId: "pi-agent", sessionKey: "conv-a", runId: "run-7" },
      () => agentA.prompt("a"),
    );
    await until(() => agentA.state.pendingToolCalls.size > 0, 10_000, "session A's first tool");
    await withHookbusRun(
      { client: p.client, agentId: "pi-agent", sessionKey: "conv-b", runId: "run-7" },
      () => agentB.prompt("b"),
    );
    bDone.open();
    await runA;
    expect(b.ran.lookup).toEqual([{ word: "z" }]);
    expect(a.ran.lookup).toEqual([{ word: "a" }, { word: "b" }, { word: "c" }]);
    const ids = (await beforeToolCallRecords(p)).map((r) => r.context.toolCallId).sort();
    expect(ids).toEqual(["b-call-1", "call-1", "call-2", "call-3"]);
  });

  it("a blocked final answer is never shown: pi reports the block as the run's error", async () => {
    const p = await pipeline([...basePolicies, blockSecrets]);
    const { agent, events } = piAgent([{ text: "The SECRET is 42." }]);
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-block" }, () =>
      agent.prompt("tell me"),
    );
    expect(agent.state.errorMessage).toMatch(/^HOOKBUS_BLOCKED: .*the answer carries a secret/);
    expect(JSON.stringify(events)).not.toContain("SECRET is");
    expect(JSON.stringify(agent.state.messages)).not.toContain("SECRET is");
  });

  it("before_tool_result replaces what the model gets; the agent's own hooks still run, around hookbus; detaching restores them", async () => {
    const withholdTokens = definePolicy({
      name: "withhold-tokens",
      hooks: {
        before_tool_result: (event) =>
          JSON.stringify(event.result).includes("token-123")
            ? { content: "[withheld]" }
            : undefined,
      },
    });
    const p = await pipeline([...basePolicies, withholdTokens]);
    const { ran, tools } = recordingTools();
    const { model, seen } = scriptedModel([
      { calls: [{ id: "c-read", name: "read_file", args: { path: "/etc/passwd" } }] },
      { text: "read it" },
    ]);
    const ownBefore: unknown[] = [];
    const ownBeforeToolCall = (context: BeforeToolCallContext) => {
      ownBefore.push(structuredClone(context.args));
      return Promise.resolve(undefined);
    };
    // The agent's own afterToolCall puts a token into the result: hookbus checks what it made.
    const ownAfterToolCall = () =>
      Promise.resolve({ content: [{ type: "text" as const, text: "token-123" }] });
    const agent = new Agent({
      initialState: { model, tools },
      beforeToolCall: ownBeforeToolCall,
      afterToolCall: ownAfterToolCall,
    });
    const detach = attachHookbus(agent);
    expect(() => attachHookbus(agent)).toThrow(/attached to this pi Agent already/);
    await withHookbusRun({ client: p.client, agentId: "pi-agent", sessionKey: "s-result" }, () =>
      agent.prompt("read"),
    );
    expect(ran.read_file).toEqual([{ path: "/tmp/sandbox/file" }]);
    expect(ownBefore).toEqual([{ path: "/tmp/sandbox/file" }]);
    expect(resultText(toolResults(agent)[0]!)).toBe("[withheld]");
    expect(JSON.stringify(seen[1]!.messages)).not.toContain("token-123");
    detach();
    expect(agent.beforeToolCall).toBe(ownBeforeToolCall);
    expect(agent.afterToolCall).toBe(ownAfterToolCall);
  });

  it("outside a run, the agent refuses (HOOKBUS_NO_RUN) and no tool executes", async () => {
    const { ran, tools } = recordingTools();
    const { agent } = piAgent(
      [{ calls: [{ id: "c1", name: "lookup", args: { word: "x" } }] }, { text: "x" }],
      tools,
    );
    await agent.prompt("x");
    expect(agent.state.errorMessage).toMatch(/^HOOKBUS_NO_RUN: /);
    expect(ran.lookup).toEqual([]);
  });
});
