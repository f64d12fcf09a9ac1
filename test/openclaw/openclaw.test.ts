/**
 * The hookbus OpenClaw plugin inside the real OpenClaw (2026.9, `openclaw agent --local` on
 * Node 24) with a loopback fake model, on real NATS with a coordinator and policy workers.
 * Run with `npm run test:openclaw` after scripts/openclaw-setup.sh (not part of `vitest run`:
 * each OpenClaw turn starts the whole CLI, tens of seconds on a loaded machine).
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { definePolicy, type Policy } from "../../src/index.js";
import { decisionsOf, noExec, policyPipeline } from "../integration/adapters/policies.js";
import { until, useNatsServer, type Pipeline } from "../integration/pipeline/harness.js";
import { startFakeOpenAi, toolResultsShown, type FakeOpenAi } from "./fake-openai.js";
import {
  openClawHome,
  replyText,
  requireOpenClaw,
  runAgent,
  type AgentRun,
} from "./openclaw-cli.js";

requireOpenClaw();
const nats = useNatsServer();
let model: FakeOpenAi;
beforeAll(async () => {
  model = await startFakeOpenAi();
});
afterAll(async () => {
  await model.close();
});

const AGENT = "openclaw-agent";

const publicOnly = definePolicy({
  name: "public-only",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "read" && String(event.params.path).includes("secret")
        ? { params: { ...event.params, path: "public.txt" } }
        : undefined,
  },
});

const withholdTokens = definePolicy({
  name: "withhold-tokens",
  hooks: {
    before_tool_result: (event) =>
      JSON.stringify(event.result).includes("TOKEN-") ? { content: "[token withheld]" } : undefined,
  },
});

const pingReply = definePolicy({
  name: "ping-reply",
  hooks: {
    before_agent_reply: (event) =>
      event.cleanedBody.includes("ping-hookbus")
        ? { reply: { text: "pong from policy" }, reason: "canned" }
        : undefined,
  },
});

const toolPolicies: Policy[] = [noExec, publicOnly, withholdTokens];

function pipeline(policies: Policy[]): Promise<Pipeline> {
  return policyPipeline(nats.url(), policies);
}

function homeFor(p: Pipeline, timeoutMs = 10_000) {
  return openClawHome(model.baseUrl, {
    server: nats.url(),
    namespace: p.namespace,
    agentId: AGENT,
    timeoutMs,
  });
}

/** What the model was sent and what OpenClaw said, kept in test/artifacts/ (git-ignored) to read after a failure. */
function keep(session: string, run: AgentRun): void {
  const dir = join(import.meta.dirname, "../artifacts");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `openclaw-${session}.json`),
    JSON.stringify({ requests: model.requests, stdout: run.stdout, stderr: run.stderr }, null, 1),
  );
}

describe("the hookbus plugin in openclaw agent --local", () => {
  it("blocks exec before it runs, rewrites read's path, withholds a token from the model, and lets four parallel calls through its gate", async () => {
    const p = await pipeline(toolPolicies);
    const oc = homeFor(p);
    writeFileSync(join(oc.workspace, "public.txt"), "public contents");
    writeFileSync(join(oc.workspace, "secret.txt"), "secret contents");
    for (const w of ["a", "b", "c", "d"])
      writeFileSync(join(oc.workspace, `${w}.txt`), `word ${w}`);
    writeFileSync(join(oc.workspace, "token.txt"), "TOKEN-1234");
    model.script([
      { calls: [{ id: "callexec", name: "exec", input: { command: "touch exec-ran.txt" } }] },
      { calls: [{ id: "callsecret", name: "read", input: { path: "secret.txt" } }] },
      { calls: [{ id: "calltoken", name: "read", input: { path: "token.txt" } }] },
      {
        calls: ["a", "b", "c", "d"].map((w) => ({
          id: `call${w}`,
          name: "read",
          input: { path: `${w}.txt` },
        })),
      },
      { text: "All done." },
    ]);

    const run = await runAgent(oc, "s-tools", "do the chores");
    keep("s-tools", run);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    expect(replyText(run)).toBe("All done.");

    // exec: blocked at before_tool_call; its command never ran; the model read the reason.
    expect(existsSync(join(oc.workspace, "exec-ran.txt"))).toBe(false);
    expect(toolResultsShown(model.requests[1]).get("callexec")).toContain("exec is not allowed");
    // read secret.txt: the rewritten path is what the tool read.
    const afterSecret = toolResultsShown(model.requests[2]).get("callsecret");
    expect(afterSecret).toContain("public contents");
    expect(afterSecret).not.toContain("secret contents");
    // before_tool_result (the tool-result middleware): the model never saw the token.
    const afterToken = toolResultsShown(model.requests[3]).get("calltoken");
    expect(afterToken).toContain("[token withheld]");
    expect(JSON.stringify(model.requests.slice(3))).not.toContain("TOKEN-1234");
    // Four parallel calls: OpenClaw has no after_llm_call point, so all four pass before_tool_call.
    const shown = toolResultsShown(model.requests[4]);
    for (const w of ["a", "b", "c", "d"]) expect(shown.get(`call${w}`)).toContain(`word ${w}`);

    const calls = await decisionsOf(p, "before_tool_call");
    expect(calls.map((r) => r.context.toolCallId).sort()).toEqual(
      ["calla", "callb", "callc", "calld", "callexec", "callsecret", "calltoken"].sort(),
    );
    for (const r of calls) {
      expect(r.context).toMatchObject({
        agentId: AGENT,
        sessionKey: "agent:main:s-tools",
        openclawAgentId: "main",
      });
      expect(r.context.runId).toEqual(expect.any(String));
    }
    const exec = calls.find((r) => r.context.toolCallId === "callexec")!;
    expect(exec.decision).toMatchObject({ outcome: "block", blockReason: "exec is not allowed" });
    expect(await decisionsOf(p, "before_tool_result")).toHaveLength(6);
    // The observations: each tool call's after_tool_call (the blocked exec with its reason), the
    // run's llm_input, llm_output and agent_end. The coordinator stores them after the CLI sent
    // them: wait for them.
    const observedNow = async () =>
      (await p.readLog()).map((s) => s.record).filter((r) => r.kind === "observation");
    const observed = await until(
      async () => {
        const found = await observedNow();
        const tools = found.filter((r) => r.hook === "after_tool_call").length;
        return tools >= 7 && found.some((r) => r.hook === "agent_end") ? found : undefined;
      },
      20_000,
      "seven after_tool_call observations and agent_end",
    ).catch(observedNow);
    const afterTool = observed.filter((r) => r.hook === "after_tool_call");
    expect(afterTool.map((r) => r.event.toolCallId).sort()).toEqual(
      ["calla", "callb", "callc", "calld", "callexec", "callsecret", "calltoken"].sort(),
    );
    expect(afterTool.find((r) => r.event.toolCallId === "callexec")?.event).toMatchObject({
      blocked: true,
      blockReason: "exec is not allowed",
    });
    for (const hook of ["llm_input", "llm_output", "agent_end"])
      expect(observed.filter((r) => r.hook === hook).length, hook).toBeGreaterThan(0);
    // One client in the process although OpenClaw loaded the plugin module more than once.
    expect(run.stderr.match(/hookbus: connected/g) ?? []).toHaveLength(1);
  }, 600_000);

  it("a before_agent_reply policy answers instead of the agent: the model is never called", async () => {
    const p = await pipeline([pingReply]);
    const oc = homeFor(p);
    model.script([{ text: "the model answered" }]);
    const run = await runAgent(oc, "s-ping", "ping-hookbus please");
    keep("s-ping", run);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    expect(replyText(run)).toBe("pong from policy");
    expect(model.requests).toHaveLength(0);
    const [record] = await decisionsOf(p, "before_agent_reply");
    expect(record?.context).toMatchObject({ agentId: AGENT, sessionKey: "agent:main:s-ping" });
  }, 600_000);

  it("with the coordinator down the tool gate fails closed: the command never runs, the model reads why", async () => {
    const p = await pipeline(toolPolicies);
    await p.coordinator.stop();
    const oc = homeFor(p, 3000);
    model.script([
      { calls: [{ id: "callread", name: "read", input: { path: "public.txt" } }] },
      { text: "could not read" },
    ]);
    writeFileSync(join(oc.workspace, "public.txt"), "public contents");
    const run = await runAgent(oc, "s-down", "read the file");
    keep("s-down", run);
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    const shown = toolResultsShown(model.requests[1]).get("callread");
    expect(shown).toMatch(/hookbus could not decide \(HOOKBUS_[A-Z_]+\).*fail closed/);
    expect(shown).not.toContain("public contents");
  }, 600_000);
});
