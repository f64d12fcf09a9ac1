/**
 * The agent side of a wait (issue 22): `onApproval` is told of each change of a pending request,
 * not at every poll, and `HookbusClient.close()` ends a wait at once with a coded error. On a
 * real nats-server with a coordinator and policy workers.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { afterEach, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type ApprovalProgress,
  type PolicyRunner,
} from "../../../src/index.js";
import { answerApproval } from "../../../src/approvals/client.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { applyRegistry } from "../faults/harness.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import { asker, ctx, REGISTRY, rewriter, toolEvent } from "./harness.js";

const nats = useNatsServer();
const stops: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** A second asker: with `g2` in the params, the request also needs that group. */
const opsAsker = definePolicy({
  name: "ops-asker",
  hooks: {
    before_tool_call(event) {
      const g2 = (event.params as { g2?: string }).g2;
      if (g2 === undefined) return undefined;
      return { requireApproval: { title: "ops look", timeoutMs: 60_000, approvers: g2 } };
    },
  },
});

async function start(namespace: string): Promise<HookbusClient> {
  await applyRegistry(await nats.connect(), namespace, {
    policies: [
      ...REGISTRY.policies,
      { name: "ops-asker", hooks: ["before_tool_call"], priority: 5, timeoutMs: 4000 },
    ],
  });
  const runner: PolicyRunner = await runPolicy([asker, rewriter, opsAsker], {
    nc: await nats.connect(),
    namespace,
    state: new MemorySessionStateStore(),
  });
  const coordinator: Coordinator = await startCoordinator({
    nc: await nats.connect(),
    namespace,
    id: "c-progress",
  });
  const client = await HookbusClient.connect({ nc: await nats.connect(), namespace });
  stops.push(
    () => runner.stop(),
    () => coordinator.stop(),
    () => client.close(),
  );
  return client;
}

/** Counts the status questions the agent asks (a plain subscriber sees them; it never replies). */
function countPolls(nc: NatsConnection, namespace: string): { count: () => number } {
  let n = 0;
  const sub = nc.subscribe(`${namespace}.approvals.status.>`, { callback: () => void n++ });
  stops.push(() => Promise.resolve(sub.unsubscribe()));
  return { count: () => n };
}

describe("approval waits", () => {
  it("onApproval fires once per change of the request, not at every poll", async () => {
    const namespace = uniqueNamespace("apw");
    const client = await start(namespace);
    const polls = countPolls(await nats.connect(), namespace);
    const progress: ApprovalProgress[] = [];
    const result = client.call(
      "before_tool_call",
      ctx("w-1"),
      toolEvent("w-1", { g: "security", g2: "ops" }),
      {
        callId: "w-1",
        onApproval: (p) => progress.push(p),
      },
    );
    const first = await until(() => progress[0], 15_000, "the request is pending");
    expect(first.request.approvers).toEqual(expect.arrayContaining(["security", "ops"]));
    expect(first.approvedBy).toEqual([]);
    // Several polls with the same state: still one report.
    await until(() => polls.count() >= 3 || undefined, 15_000, "three polls");
    expect(progress).toHaveLength(1);

    const nc = await nats.connect();
    await answerApproval(
      nc,
      { id: first.id, decision: "approve" },
      { namespace, approver: "alice", group: "security" },
    );
    const second = await until(() => progress[1], 15_000, "the change is reported");
    expect(second.approvedBy).toEqual(["security"]);
    const seen = polls.count();
    await until(() => polls.count() >= seen + 2 || undefined, 15_000, "two more polls");
    expect(progress).toHaveLength(2);

    await answerApproval(
      nc,
      { id: first.id, decision: "approve" },
      { namespace, approver: "olga", group: "ops" },
    );
    expect((await result).decision).toMatchObject({ resolvedApproval: { resolution: "approved" } });
    expect(progress).toHaveLength(2);
  });

  it("close() ends a pending wait at once with HOOKBUS_CLIENT_CLOSED; later waits are refused", async () => {
    const namespace = uniqueNamespace("apc");
    const client = await start(namespace);
    const progress: ApprovalProgress[] = [];
    const result = client.call("before_tool_call", ctx("c-1"), toolEvent("c-1"), {
      callId: "c-1",
      onApproval: (p) => progress.push(p),
    });
    result.catch(() => {});
    const first = await until(() => progress[0], 15_000, "the request is pending");
    const started = Date.now();
    await client.close();
    const error = await rejection(result);
    // The request waits 60 s; the wait ended with the close, not with the request.
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toMatchObject({ code: "HOOKBUS_CLIENT_CLOSED", details: { id: first.id } });
    expect(
      await rejection(client.waitForApproval("agent-ap", { id: first.id, callId: "c-1" })),
    ).toMatchObject({ code: "HOOKBUS_COORDINATOR_UNAVAILABLE" });
  });

  it("waitForApproval: a call asked without waiting returns its pending decision; the wait gives the settlement", async () => {
    const namespace = uniqueNamespace("apn");
    const client = await start(namespace);
    const pending = await client.call("before_tool_call", ctx("n-1"), toolEvent("n-1"), {
      callId: "n-1",
      waitForApproval: false,
    });
    expect(pending.decision.outcome).toBe("pending_approval");
    const id = pending.decision.approval!.id;
    const settled = client.waitForApproval("agent-ap", { id, callId: "n-1" });
    await answerApproval(
      await nats.connect(),
      { id, decision: "deny", reason: "no" },
      { namespace, approver: "bob" },
    );
    expect(await settled).toMatchObject({
      outcome: "block",
      blockReason: "approval denied by bob: no",
    });
    // Another call's id is refused, not waited for.
    expect(
      await rejection(client.waitForApproval("agent-ap", { id, callId: "other" })),
    ).toMatchObject({
      code: "HOOKBUS_APPROVAL_FORBIDDEN",
    });
  });
});
