/**
 * Approvals under the configuration `hookbus auth` writes, on a real nats-server: an approver
 * answers under its own name for its own groups, and every forged answer is refused by the server
 * itself (another approver's name, a group the user is not in, an agent or a worker answering) or
 * by the coordinator (a group the request does not name, another agent's request).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  HookbusClient,
  runPolicy,
  type ApprovalProgress,
  type PolicyRunner,
} from "../../../src/index.js";
import { uniqueNamespace } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import { asker } from "../approvals/harness.js";
import { requestDenied, subscribeDenied, useAuthServer } from "./harness.js";
import { answerApproval, listApprovals } from "../../../src/approvals/client.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const ns = uniqueNamespace("auth-ap");
const s = new Subjects(ns);
const server = useAuthServer({
  namespace: ns,
  agents: ["agent-a", "agent-b"],
  policies: ["asker"],
  coordinators: ["c1"],
  operators: ["ops"],
  approvers: ["alice", "mallory"],
  approverGroups: { security: ["alice"] },
});

let coordinator: Coordinator;
let runner: PolicyRunner;
let client: HookbusClient;
let agentB: NatsConnection;

beforeAll(async () => {
  const ops = await server.as("operator", "ops");
  await (
    await RegistryStore.open(ops, s)
  ).apply({
    policies: [{ name: "asker", hooks: ["before_tool_call"], priority: 10, timeoutMs: 4000 }],
  });
  coordinator = await startCoordinator({
    nc: await server.as("coordinator", "c1"),
    namespace: ns,
    id: "c1",
  });
  runner = await runPolicy(asker, { nc: await server.as("worker", "asker"), namespace: ns });
  client = await HookbusClient.connect({
    nc: await server.as("agent", "agent-a"),
    namespace: ns,
    timeoutMs: 10_000,
  });
  agentB = await server.as("agent", "agent-b");
  await until(() => coordinator.registry().revision >= 1, 10_000, "coordinator sees registry");
}, 60_000);

afterAll(async () => {
  await client?.close();
  await runner?.stop();
  await coordinator?.stop();
}, 30_000);

async function pending(callId: string, params: Record<string, unknown>) {
  const progress: ApprovalProgress[] = [];
  const ctx = { agentId: "agent-a", sessionKey: "s-1", runId: "r-1", toolCallId: callId };
  const result = client.call(
    "before_tool_call",
    ctx,
    { toolName: "wire_money", toolCallId: callId, params },
    { callId, onApproval: (p) => progress.push(p) },
  );
  result.catch(() => {});
  return { result, first: await until(() => progress[0], 20_000, `${callId} pending`) };
}

describe("approvals with the generated permissions", () => {
  it("the approver of the named group approves; forged answers never reach a coordinator", async () => {
    const { result, first } = await pending("pay-1", { g: "security" });
    const mallory = await server.as("approver", "mallory");
    const body = JSON.stringify({ id: first.id, decision: "approve" });

    // Refused by the server: answering under another approver's name, for a group one is not in.
    await requestDenied(mallory, s.approvalAnswer("alice", "security"), body);
    await requestDenied(mallory, s.approvalAnswer("mallory", "security"), body);
    // An agent or a policy worker cannot answer at all, nor listen to the answers.
    const agentA = await server.as("agent", "agent-a");
    await requestDenied(agentA, s.approvalAnswer("agent-a", "-"), body);
    await requestDenied(await server.as("worker", "asker"), s.approvalAnswer("asker", "-"), body);
    await subscribeDenied(mallory, s.approvalAnswerWildcard);
    // Refused by the coordinator: an answer for no group, when the request names one.
    expect(
      await rejection(
        answerApproval(
          mallory,
          { id: first.id, decision: "approve" },
          { namespace: ns, approver: "mallory" },
        ),
      ),
    ).toMatchObject({ code: "HOOKBUS_APPROVAL_FORBIDDEN" });

    // An approver reads the requests; alice answers for security and the call proceeds.
    const alice = await server.as("approver", "alice");
    expect((await listApprovals(alice, ns)).map((e) => e.id)).toContain(first.id);
    await answerApproval(
      alice,
      { id: first.id, decision: "approve", reason: "expected payment" },
      { namespace: ns, approver: "alice", group: "security" },
    );
    const { decision } = await result;
    expect(decision).toMatchObject({
      outcome: "allow",
      resolvedApproval: { resolution: "approved", by: ["alice"] },
    });
  }, 60_000);

  it("an agent asks only about its own requests", async () => {
    const { result, first } = await pending("pay-2", { t: 1500 });
    const body = JSON.stringify({ id: first.id });
    // Another agent's status subject: refused by the server.
    await requestDenied(agentB, s.approvalStatus("agent-a"), body);
    // Its own subject, another agent's id: refused by the coordinator.
    const reply = await agentB.request(s.approvalStatus("agent-b"), body, { timeout: 5000 });
    expect(reply.headers?.get("Hookbus-Error-Code")).toBe("HOOKBUS_APPROVAL_FORBIDDEN");
    expect((await result).decision).toMatchObject({ outcome: "block" });
  }, 60_000);
});
