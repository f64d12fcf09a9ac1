/**
 * The configuration `hookbus auth` writes, on a real nats-server: every role's own path works
 * (a full call: operator's registry → agent → coordinator → both policies' workers → log →
 * auditor), and every way an agent or a worker could step outside its role is refused by the
 * server itself, named by the exact subject it refused.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Bus,
  definePolicy,
  RegistryStore,
  runPolicy,
  startCoordinator,
  Subjects,
  type Coordinator,
  type PolicyRunner,
} from "../../../src/index.js";
import { queryLog } from "../../../src/audit/query.js";
import { uniqueNamespace } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { publishDenied, requestDenied, subscribeDenied, useAuthServer } from "./harness.js";

const ns = uniqueNamespace("auth");
const s = new Subjects(ns);
const NS = ns.toUpperCase();
const server = useAuthServer({
  namespace: ns,
  agents: ["agent-a", "agent-b"],
  policies: ["p1", "p2"],
  coordinators: ["c1"],
  operators: ["ops"],
  auditors: ["aud"],
});

const p1 = definePolicy({
  name: "p1",
  hooks: {
    before_tool_call: async (event, _context, { state }) => {
      await state.set("seen", event.toolName);
      return event.toolName === "exec" ? { block: true, blockReason: "p1: no exec" } : undefined;
    },
  },
});
const p2 = definePolicy({ name: "p2", hooks: { before_tool_call: () => undefined } });

let agentA: NatsConnection;
let worker1: NatsConnection;
let coordinator: Coordinator;
const runners: PolicyRunner[] = [];

/** A call as any agent in any language sends it: JSON on `<ns>.call.<agent>.<hook>`. */
async function call(nc: NatsConnection, agentId: string, toolName: string, callId: string) {
  const body = {
    callId,
    hook: "before_tool_call",
    context: { agentId, sessionKey: "s-1", runId: "r-1", toolName, toolCallId: callId },
    event: { toolName, toolCallId: callId, params: {} },
  };
  const reply = await nc.request(s.call(agentId, "before_tool_call"), JSON.stringify(body), {
    timeout: 10_000,
  });
  return reply.json<{ decision: { outcome: string; blockReason?: string }; recordSeq: number }>();
}

beforeAll(async () => {
  const ops = await server.as("operator", "ops");
  const store = await RegistryStore.open(ops, s);
  await store.apply({
    policies: [
      { name: "p1", hooks: ["before_tool_call"], priority: 20 },
      { name: "p2", hooks: ["before_tool_call"], priority: 10 },
    ],
  });
  coordinator = await startCoordinator({
    nc: await server.as("coordinator", "c1"),
    namespace: ns,
    id: "c1",
  });
  worker1 = await server.as("worker", "p1");
  runners.push(await runPolicy(p1, { nc: worker1, namespace: ns }));
  runners.push(await runPolicy(p2, { nc: await server.as("worker", "p2"), namespace: ns }));
  agentA = await server.as("agent", "agent-a");
  await until(() => coordinator.registry().revision >= 1, 10_000, "coordinator sees registry");
}, 60_000);

afterAll(async () => {
  for (const runner of runners) await runner.stop();
  await coordinator?.stop();
}, 30_000);

describe("each role's own path works with the generated users", () => {
  it("an agent's call goes through coordinator and both workers, and the auditor reads the record", async () => {
    const allowed = await call(agentA, "agent-a", "read_file", "call-1");
    expect(allowed.decision.outcome).toBe("allow");
    const blocked = await call(agentA, "agent-a", "exec", "call-2");
    expect(blocked.decision).toMatchObject({ outcome: "block", blockReason: "p1: no exec" });

    const bus = await Bus.open(await server.as("auditor", "aud"), { namespace: ns });
    const records: string[] = [];
    for await (const { record } of queryLog(bus, { agentId: "agent-a" }))
      if (record.kind === "decision")
        records.push(`${record.callId} ${String(record.decision.outcome)}`);
    expect(records).toEqual(["call-1 allow", "call-2 block"]);
  });

  it("an agent reads the registry (fast path) and asks for its own blobs", async () => {
    const kv = await new Kvm(agentA).open(s.registryBucket);
    expect((await kv.get("policies"))?.revision).toBeGreaterThan(0);
    const jsm = await jetstreamManager(agentA);
    const own = `${ns}.blob.agent-a.${"0".repeat(64)}.0`;
    await expect(jsm.direct.getMessage(s.blobStream, { last_by_subj: own })).resolves.toBeNull();
  });
});

describe("an agent cannot step outside its own identity", () => {
  it("cannot call or observe as another agent", async () => {
    await requestDenied(agentA, s.call("agent-b", "before_tool_call"), "{}");
    await requestDenied(agentA, `${ns}.observe.agent-b.after_tool_call`, "{}");
  });

  it("cannot read another agent's decisions, nor any inbox but its own", async () => {
    await subscribeDenied(agentA, `_INBOX_${ns}.agent.agent-b.>`);
    await subscribeDenied(agentA, "_INBOX.>");
    await subscribeDenied(agentA, ">");
    await subscribeDenied(agentA, `_INBOX_${ns}.coordinator.c1.>`);
  });

  it("cannot read records, directly or through JetStream", async () => {
    await subscribeDenied(agentA, `${ns}.audit.>`);
    await requestDenied(agentA, `$JS.API.STREAM.MSG.GET.${NS}_LOG`, '{"seq":1}');
    await requestDenied(agentA, `$JS.API.DIRECT.GET.${NS}_LOG`, '{"seq":1}');
    await requestDenied(agentA, `$JS.API.CONSUMER.CREATE.${NS}_LOG`, "{}");
    await requestDenied(agentA, `$JS.API.CONSUMER.CREATE.${NS}_LOG.spy.${ns}.audit.>`, "{}");
  });

  it("cannot read another agent's blobs, by subject or by sequence", async () => {
    const other = `${ns}.blob.agent-b.${"0".repeat(64)}.0`;
    await requestDenied(agentA, `$JS.API.DIRECT.GET.${NS}_BLOBS.${other}`);
    await requestDenied(agentA, `$JS.API.DIRECT.GET.${NS}_BLOBS`, '{"seq":1}');
    await requestDenied(agentA, `$JS.API.STREAM.MSG.GET.${NS}_BLOBS`, '{"seq":1}');
    await subscribeDenied(agentA, `${ns}.blob.>`);
  });

  it("cannot subscribe to policy or call subjects, nor join a worker's or coordinators' queue group", async () => {
    await subscribeDenied(agentA, s.policyWildcard("p1"));
    await subscribeDenied(agentA, s.policyWildcard("p1"), s.policyQueue("p1"));
    await subscribeDenied(agentA, s.callWildcard);
    await subscribeDenied(agentA, s.callWildcard, s.coordinatorQueue);
    await subscribeDenied(agentA, `${ns}.call.agent-b.*`);
  });

  it("cannot make JetStream deliver to another agent's inbox (a push consumer of the registry)", async () => {
    const b = await server.as("agent", "agent-b");
    const foreign: string[] = [];
    b.subscribe(`_INBOX_${ns}.agent.agent-b.>`, {
      callback: (_e, m) => void foreign.push(m.subject),
    });
    await b.flush();
    const own: string[] = [];
    agentA.subscribe(`_INBOX_${ns}.agent.agent-a.own`, {
      callback: (_e, m) => void own.push(m.subject),
    });
    await agentA.flush();
    const jsm = await jetstreamManager(agentA);
    const filter_subject = `$KV.${s.registryBucket}.>`;
    const stream = `KV_${s.registryBucket}`;
    // The server accepts both consumers, but delivers only where the creator may subscribe.
    await jsm.consumers.add(stream, {
      name: "to-b",
      deliver_subject: `_INBOX_${ns}.agent.agent-b.spy`,
      filter_subject,
    });
    await jsm.consumers.add(stream, {
      name: "to-a",
      deliver_subject: `_INBOX_${ns}.agent.agent-a.own`,
      filter_subject,
    });
    await until(() => own.length > 0, 5000, "delivery to the agent's own inbox");
    await b.flush();
    expect(foreign).toEqual([]);
  });

  it("cannot forge a verdict or a policy request", async () => {
    await publishDenied(agentA, `_INBOX_${ns}.coordinator.c1.x.1`, { reply: "" });
    await requestDenied(agentA, s.policy("p1", "before_tool_call"), "{}");
  });

  it("cannot write the registry, the log, the chain or the blobs", async () => {
    const js = jetstream(agentA);
    await requestDenied(agentA, `$KV.${s.registryBucket}.policies`, "{}");
    await expect(
      js.publish(s.audit("agent-a", "s-1", "before_tool_call", "allow"), "{}"),
    ).rejects.toThrow(/Permissions Violation/);
    await requestDenied(agentA, s.audit("agent-b", "s-1", "before_tool_call", "allow"), "{}");
    await requestDenied(agentA, `$KV.${ns}_chain.agent-a.s-1`, "{}");
    await requestDenied(agentA, `${ns}.blob.agent-a.${"0".repeat(64)}.0`, "x");
    await requestDenied(agentA, `$JS.API.STREAM.PURGE.${NS}_LOG`, "{}");
    await requestDenied(agentA, `$JS.API.STREAM.DELETE.${NS}_BLOBS`, "{}");
    await requestDenied(agentA, `$JS.API.STREAM.CREATE.${NS}_SPY`, "{}");
  });
});

describe("a worker sees only its own policy's traffic", () => {
  it("cannot subscribe to another policy's requests, nor its own outside the queue group", async () => {
    await subscribeDenied(worker1, s.policyWildcard("p2"), s.policyQueue("p2"));
    await subscribeDenied(worker1, s.policyWildcard("p2"));
    await subscribeDenied(worker1, s.policyWildcard("p1"));
    await subscribeDenied(worker1, s.policyWildcard("p1"), "another-group");
  });

  it("cannot read other policies' verdicts, nor the decisions or records", async () => {
    await subscribeDenied(worker1, `_INBOX_${ns}.coordinator.>`);
    await subscribeDenied(worker1, "_INBOX.>");
    await subscribeDenied(worker1, `_INBOX_${ns}.worker.p2.>`);
    await subscribeDenied(worker1, `${ns}.audit.>`);
    await requestDenied(worker1, `$JS.API.STREAM.MSG.GET.${NS}_LOG`, '{"seq":1}');
    await requestDenied(worker1, `$JS.API.CONSUMER.CREATE.${NS}_LOG.spy.${ns}.audit.>`, "{}");
  });

  it("cannot forge a verdict it was not asked for, nor write another policy's state", async () => {
    await publishDenied(worker1, `_INBOX_${ns}.coordinator.c1.x.1`);
    await requestDenied(worker1, `$KV.${s.stateBucket}.p2.s-1.seen`, "{}");
    await requestDenied(worker1, s.call("agent-a", "before_tool_call"), "{}");
  });
});

describe("operators and auditors", () => {
  it("only an operator writes the registry; an auditor reads the log and writes nothing", async () => {
    const aud = await server.as("auditor", "aud");
    await requestDenied(aud, `$KV.${s.registryBucket}.policies`, "{}");
    await requestDenied(aud, s.audit("agent-a", "s-1", "before_tool_call", "allow"), "{}");
    await requestDenied(aud, `$JS.API.STREAM.PURGE.${NS}_LOG`, "{}");
    await requestDenied(aud, s.call("agent-a", "before_tool_call"), "{}");
    const ops = await server.as("operator", "ops");
    await requestDenied(ops, `$JS.API.STREAM.MSG.GET.${NS}_LOG`, '{"seq":1}');
    await requestDenied(ops, s.call("agent-a", "before_tool_call"), "{}");
  });
});
