/**
 * The configuration `hookbus auth` writes, on a real nats-server: every role's own path works
 * (a full call through the agent SDK: operator's registry → agent → coordinator → both policies'
 * workers → log → auditor; an observation; the sealer sealing the records; `hookbus status`),
 * and every way an agent or a worker could step outside its role is refused by the
 * server itself, named by the exact subject it refused.
 */
import { randomBytes } from "node:crypto";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Bus,
  definePolicy,
  HookbusClient,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import { queryLog } from "../../../src/audit/query.js";
import { main } from "../../../src/cli/main.js";
import { startIndexer } from "../../../src/indexer/index.js";
import { usePostgres } from "../../support/postgres.js";
import { uniqueNamespace } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { publishDenied, requestDenied, subscribeDenied, useAuthServer } from "./harness.js";
import { createSealKey, sealKeyFromSeed } from "../../../src/log/seal/keys.js";
import { discover } from "../../../src/observability/discovery.js";
import { readSealLag } from "../../../src/sealer/lag.js";
import { readStatus } from "../../../src/status/read.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { sealStreamName } from "../../../src/log/seal/batch.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { startSealer } from "../../../src/sealer/sealer.js";
import { createSigningKey, signingKeyFromSeed } from "../../../src/log/sign/keys.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { Subjects } from "../../../src/bus/subjects.js";

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
  sealers: ["seal1"],
  indexers: ["idx1"],
});
const postgres = usePostgres();

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

let client: HookbusClient;
const coordinatorSigningKey = signingKeyFromSeed(createSigningKey().seed);

/** A call through the agent SDK, on the agent's own connection (nkey and inbox prefix). */
function call(toolName: string, callId: string) {
  const ctx = { agentId: "agent-a", sessionKey: "s-1", runId: "r-1", toolName, toolCallId: callId };
  return client.call(
    "before_tool_call",
    ctx,
    { toolName, toolCallId: callId, params: {} },
    { callId },
  );
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
    // Signed decisions: the coordinator's user creates and writes <NS>_SIGNATURES.
    signingKey: coordinatorSigningKey,
  });
  worker1 = await server.as("worker", "p1");
  runners.push(await runPolicy(p1, { nc: worker1, namespace: ns }));
  runners.push(await runPolicy(p2, { nc: await server.as("worker", "p2"), namespace: ns }));
  agentA = await server.as("agent", "agent-a");
  client = await HookbusClient.connect({ nc: agentA, namespace: ns, timeoutMs: 10_000 });
  await until(() => coordinator.registry().revision >= 1, 10_000, "coordinator sees registry");
}, 60_000);

afterAll(async () => {
  await client?.close();
  for (const runner of runners) await runner.stop();
  await coordinator?.stop();
}, 30_000);

describe("each role's own path works with the generated users", () => {
  it("an agent's SDK call goes through coordinator and both workers, its observation is recorded, and the auditor reads them", async () => {
    const allowed = await call("read_file", "call-1");
    expect(allowed.source).toBe("coordinator");
    expect(allowed.decision.outcome).toBe("allow");
    const blocked = await call("exec", "call-2");
    expect(blocked.decision).toMatchObject({ outcome: "block", blockReason: "p1: no exec" });
    await client.observe(
      "after_tool_call",
      {
        agentId: "agent-a",
        sessionKey: "s-1",
        runId: "r-1",
        toolName: "read_file",
        toolCallId: "call-1",
      },
      { toolName: "read_file", toolCallId: "call-1", params: {}, result: "ok", durationMs: 1 },
      { eventId: "obs-1" },
    );

    const bus = await Bus.open(await server.as("auditor", "aud"), { namespace: ns });
    const records: string[] = [];
    for await (const { record } of queryLog(bus, { agentId: "agent-a" })) {
      if (record.kind === "decision")
        records.push(`${record.callId} ${String(record.decision.outcome)}`);
      if (record.kind === "observation") records.push(`${record.eventId} ${record.hook}`);
    }
    expect(records).toEqual(["call-1 allow", "call-2 block", "obs-1 after_tool_call"]);
  });

  it("the sealer seals the records with its generated user, and the auditor reads the seals", async () => {
    const sealKey = sealKeyFromSeed(createSealKey().seed);
    const coordinatorKeys = [coordinatorSigningKey.publicKey];
    const sealer = await startSealer({
      nc: await server.as("sealer", "seal1"),
      namespace: ns,
      key: sealKey,
      maxBatch: 4,
      maxDelayMs: 20,
      // The sealer's user reads the coordinators' signature batches.
      coordinatorKeys,
    });
    try {
      const auditor = await Bus.open(await server.as("auditor", "aud"), { namespace: ns });
      const last = (await auditor.jsm.streams.info(s.logStream)).state.last_seq;
      expect(last).toBeGreaterThan(0);
      await until(async () => (await readSealLag(auditor)).sealedSeq >= last, 10_000, "log sealed");
      const seals = await auditor.jsm.streams.info(sealStreamName(s));
      expect(seals.state.messages).toBeGreaterThan(0);
      // The auditor's user checks both the seals and the coordinator's signatures.
      const report = await until(
        async () => {
          const r = await verifyLog(auditor, { keys: [sealKey.publicKey], coordinatorKeys });
          return r.recordSignatures!.signed === r.records && r;
        },
        10_000,
        "every record signed",
      );
      expect(report.findings).toEqual([]);
    } finally {
      await sealer.stop();
    }
  });

  it("the indexer indexes the records through its durable consumer with its generated user", async () => {
    const { pool } = await postgres.database();
    const bus = await Bus.open(await server.as("indexer", "idx1"), { namespace: ns });
    const last = (await bus.jsm.streams.info(s.logStream)).state.last_seq;
    const indexer = await startIndexer({ bus, pool, batchSize: 10, flushIntervalMs: 20 });
    try {
      await until(async () => (await indexer.lag()).records === 0, 15_000, "index caught up");
      expect(indexer.stats).toMatchObject({ indexed: last, invalid: 0 });
      const rows = await pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM hookbus_records WHERE ns = $1",
        [ns],
      );
      expect(Number(rows.rows[0]!.n)).toBe(last);
    } finally {
      await indexer.stop();
    }
  });

  it("an agent's large event goes to the blob stream under its own token, and the workers read it", async () => {
    // Random base64 does not gzip below max_payload: the SDK stores it as blob chunks.
    const big = randomBytes(1536 * 1024).toString("base64");
    const ctx = {
      agentId: "agent-a",
      sessionKey: "s-2",
      runId: "r-2",
      toolName: "write_file",
      toolCallId: "call-big",
    };
    const result = await client.call(
      "before_tool_call",
      ctx,
      { toolName: "write_file", toolCallId: "call-big", params: { content: big } },
      { callId: "call-big" },
    );
    expect(result.decision.outcome).toBe("allow");
    const jsm = await jetstreamManager(await server.as("auditor", "aud"));
    const blobs = await jsm.streams.info(s.blobStream, { subjects_filter: `${ns}.blob.agent-a.>` });
    expect(Object.keys(blobs.state.subjects ?? {}).length).toBeGreaterThan(1);
  });

  it("an operator runs `hookbus status`; workers and the coordinator answer discovery", async () => {
    const ops = await server.as("operator", "ops");
    const report = await readStatus(ops, { namespace: ns, maxWaitMs: 2000 });
    expect(report.policies.map((p) => [p.name, p.alive])).toEqual([
      ["p1", true],
      ["p2", true],
    ]);
    const found = await discover(ops, ns, { maxWaitMs: 2000 });
    expect(found.replies.map((r) => r.role).sort()).toEqual(["coordinator", "worker", "worker"]);

    const ops1 = server.generated().users.find((u) => u.role === "operator")!;
    const out: string[] = [];
    const err: string[] = [];
    const code = await main(
      [
        "status",
        "--server",
        server.url(),
        "--namespace",
        ns,
        "--nkey",
        ops1.keyFile,
        "--inbox-prefix",
        ops1.inboxPrefix,
        "--check",
      ],
      { print: (l) => out.push(l), error: (l) => err.push(l) },
    );
    expect({ code, err }).toEqual({ code: 0, err: [] });
    expect(out.join("\n")).toMatch(/p1 .*1 live worker/);
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

  it("cannot answer discovery, nor see observations or discovery traffic", async () => {
    await subscribeDenied(agentA, `${ns}.discover`);
    await subscribeDenied(agentA, `${ns}.discover.worker`);
    await subscribeDenied(agentA, s.observeWildcard);
    await subscribeDenied(agentA, `${ns}.observe.*.*`, s.coordinatorQueue);
    await requestDenied(agentA, `${ns}.discover`, "{}");
  });

  it("cannot write the registry, the log, the seals or other agents' blobs", async () => {
    const js = jetstream(agentA);
    await requestDenied(agentA, `$KV.${s.registryBucket}.policies`, "{}");
    await expect(
      js.publish(s.audit("agent-a", "s-1", "before_tool_call", "allow"), "{}"),
    ).rejects.toThrow(/Permissions Violation/);
    await requestDenied(agentA, s.audit("agent-b", "s-1", "before_tool_call", "allow"), "{}");
    await requestDenied(agentA, `${ns}.seals`, "{}");
    await requestDenied(agentA, `$KV.${ns}_seal_heads.x`, "{}");
    await requestDenied(agentA, `${ns}.blob.agent-b.${"0".repeat(64)}.0`, "x");
    await requestDenied(agentA, `${ns}.blob.=shared.${"0".repeat(64)}.0`, "x");
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
