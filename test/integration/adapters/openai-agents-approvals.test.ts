/**
 * hookbus approvals as the OpenAI Agents SDK's own run interruptions (issue 22), through the real
 * `@openai/agents` Runner, Agent, tool() and RunState with the SDK's ScriptedModel, on real NATS
 * with a coordinator and policy workers: a held call interrupts the run (`result.interruptions`);
 * `state.approve()`/`state.reject()` and a resumed run (from the serialized RunState) settle the
 * hookbus request as the run's approver; the tool runs or is refused per the coordinator.
 */
import {
  Agent,
  RunState,
  RunToolApprovalItem,
  Runner,
  setTracingDisabled,
  tool,
} from "@openai/agents";
import { assistantMessage, functionCall, ScriptedModel } from "@openai/agents/testing";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { definePolicy, type ApprovalRecord, type Policy } from "../../../src/index.js";
import {
  hookbusModel,
  hookbusTools,
  withHookbusRun,
} from "../../../src/adapters/openai-agents/index.js";
import { answerApproval, showApproval } from "../../../src/approvals/client.js";
import { toolApprovalId } from "../../../src/adapters/core/approval.js";
import { HookbusRun } from "../../../src/adapters/core/run.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { basePolicies, policyPipeline } from "./policies.js";

const nats = useNatsServer();
setTracingDisabled(true);
const runner = new Runner({ tracingDisabled: true });
const AGENT = "openai-approver-agent";

const holdDeploy = definePolicy({
  name: "hold-deploy",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "deploy"
        ? { requireApproval: { title: `deploy to ${String(event.params.env)}`, timeoutMs: 60_000 } }
        : undefined,
  },
});
const policies: Policy[] = [holdDeploy, ...basePolicies];

/** One app session: its agent (a scripted model, a deploy tool) and its runs. */
async function session(sessionKey: string, finalText: string) {
  const p = await policyPipeline(nats.url(), policies);
  const ran: unknown[] = [];
  const tools = hookbusTools(
    [
      tool({
        name: "deploy",
        description: "Deploy the app",
        parameters: z.object({ env: z.string() }),
        execute: (input) => {
          ran.push(input);
          return `deployed to ${input.env}`;
        },
      }),
    ],
    { approvals: true },
  );
  const base = new ScriptedModel([
    [functionCall("deploy", { env: "prod" }, { callId: "d-1" })],
    [assistantMessage(finalText)],
  ]);
  const agent = new Agent({
    name: "deployer",
    instructions: "Deploy.",
    model: hookbusModel(base, { name: "scripted-1" }),
    tools,
  });
  const options = {
    client: p.client,
    agentId: AGENT,
    sessionKey,
    approvals: { nc: p.connections.reader, approver: "chat-ui" },
  };
  const first = await withHookbusRun(options, () => runner.run(agent, "deploy it"));
  /** Resume from the serialized state, as an app that stored it between requests does. */
  const resume = async (answer: (state: RunState<unknown, Agent>) => void) => {
    const state = await RunState.fromString(agent, first.state.toString());
    answer(state);
    return withHookbusRun(options, () => runner.run(agent, state));
  };
  const id = toolApprovalId(
    new HookbusRun({ client: p.client, agentId: AGENT, sessionKey }),
    "d-1",
  );
  return { p, base, ran, first, resume, id };
}

async function approvalRecords(p: Pipeline): Promise<ApprovalRecord[]> {
  return (await p.readLog())
    .map((s) => s.record)
    .filter((r): r is ApprovalRecord => r.kind === "approval");
}

describe("hookbus/openai-agents: approvals through the SDK's run interruptions", () => {
  it("a held call interrupts the run; approving and resuming runs the tool once; one approval record", async () => {
    const s = await session("s-approve", "deployed");
    expect(s.ran).toEqual([]);
    expect(s.first.interruptions).toHaveLength(1);
    expect(s.first.interruptions[0]).toMatchObject({ name: "deploy" });
    expect(
      (await showApproval(s.p.connections.reader, s.id, s.p.namespace)).settlement,
    ).toBeUndefined();

    const second = await s.resume((state) => state.approve(state.getInterruptions()[0]!));
    expect(s.ran).toEqual([{ env: "prod" }]);
    expect(second.finalOutput).toBe("deployed");
    const records = await approvalRecords(s.p);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      approvalId: s.id,
      resolution: "approved",
      answers: [{ approver: "chat-ui", decision: "approve", from: "openai-agents" }],
    });
  });

  it("rejecting it refuses the tool with the app's message; the request is settled denied, once", async () => {
    const s = await session("s-reject", "not deployed");
    await s.resume((state) =>
      state.reject(state.getInterruptions()[0]!, { message: "not on a friday" }),
    );
    expect(s.ran).toEqual([]);
    expect(JSON.stringify(s.base.lastCall?.request.input)).toContain("not on a friday");
    const records = await approvalRecords(s.p);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      resolution: "denied",
      reason: "not on a friday",
      answers: [{ approver: "chat-ui", decision: "deny" }],
    });
  });

  it("the coordinator decides: approving in the app a request a person denied first does not run the tool", async () => {
    const s = await session("s-first", "ok");
    await answerApproval(
      s.p.connections.reader,
      { id: s.id, decision: "deny", reason: "change freeze" },
      { approver: "bob", namespace: s.p.namespace },
    );
    await s.resume((state) => state.approve(state.getInterruptions()[0]!));
    expect(s.ran).toEqual([]);
    expect(JSON.stringify(s.base.lastCall?.request.input)).toContain(
      "approval denied by bob: change freeze",
    );
    const records = await approvalRecords(s.p);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ resolution: "denied", answers: [{ approver: "bob" }] });
  });

  it("an approval for another call id does not unblock this one: the run stays interrupted", async () => {
    const s = await session("s-other", "ok");
    const second = await s.resume((state) => {
      const held = state.getInterruptions()[0]!;
      const raw = held.rawItem as { callId: string };
      // An approval the app gives for a call id it made up, not for the held call.
      state.approve(
        new RunToolApprovalItem(
          { ...held.rawItem, callId: `${raw.callId}-other` } as typeof held.rawItem,
          held.agent,
          "deploy",
        ),
      );
    });
    expect(second.interruptions).toHaveLength(1);
    expect(s.ran).toEqual([]);
    expect(
      (await showApproval(s.p.connections.reader, s.id, s.p.namespace)).settlement,
    ).toBeUndefined();
    expect(await approvalRecords(s.p)).toEqual([]);
    // The resumed run looked the held call's request up: no second decision, no refused call.
    const kinds = (await s.p.readLog()).map((r) => r.record.kind);
    expect(kinds).not.toContain("error");
    const toolDecisions = (await s.p.readLog()).filter(
      (r) => r.record.kind === "decision" && r.record.hook === "before_tool_call",
    );
    expect(toolDecisions).toHaveLength(1);
  });
});
