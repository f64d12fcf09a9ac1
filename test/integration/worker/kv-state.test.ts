/**
 * Session state in JetStream KV: the shared store contract, exactness under concurrent updates
 * from separate connections and runners, survival across runner restarts, the bounded CAS
 * retry, and the bucket's layout and settings.
 */
import { Kvm } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Subjects } from "../../../src/bus/subjects.js";
import { encodeToken } from "../../../src/bus/tokens.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { runPolicy, type PolicyRunner } from "../../../src/worker/index.js";
import { describeStateStore } from "../../unit/worker/state-contract.js";
import {
  PolicyAskClient,
  toolContext,
  toolEvent,
  uniqueNamespace,
  useNatsServer,
} from "./harness.js";
import { createSessionState } from "../../../src/policy/state/session-state.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { DEFAULT_STATE_TTL_MS, KvSessionStateStore } from "../../../src/policy/state/kv-store.js";

const nats = useNatsServer();
let nc: NatsConnection;
const runners: PolicyRunner[] = [];

beforeAll(async () => {
  nc = await connection();
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
});

const connection = () => nats.connect();

describeStateStore(
  "KvSessionStateStore",
  () => new KvSessionStateStore(nc, { namespace: uniqueNamespace("kv") }),
);

/** Counts tool calls per session in state and answers with the count it reached. */
const counter = definePolicy({
  name: "counter",
  version: "1",
  hooks: {
    async before_tool_call(_event, _ctx, { state }) {
      const n = await state.update<number>("toolCalls", (prev) => (prev ?? 0) + 1);
      return { params: { n } };
    },
  },
});

const countOf = (r: { reply: { verdict?: unknown } }) =>
  (r.reply.verdict as { params: { n: number } }).params.n;

describe("KV state through runners", () => {
  it("three runners on separate connections incrementing one key concurrently total exactly N", async () => {
    const namespace = uniqueNamespace("kv");
    for (let i = 0; i < 3; i++)
      runners.push(await runPolicy(counter, { nc: await connection(), namespace }));
    const client = await PolicyAskClient.open(await connection(), namespace);
    const total = 60;
    const replies = await Promise.all(
      Array.from({ length: total }, () =>
        client.request(
          "counter",
          "before_tool_call",
          { event: toolEvent(), context: toolContext("busy") },
          15_000,
        ),
      ),
    );
    expect(replies.map((r) => r.errorCode).filter(Boolean)).toEqual([]);
    // Every increment saw a distinct predecessor: the counts handed out are exactly 1..N.
    expect(replies.map(countOf).sort((a, b) => a - b)).toEqual(
      Array.from({ length: total }, (_, i) => i + 1),
    );
    const store = new KvSessionStateStore(await connection(), { namespace });
    expect(await createSessionState(store, "counter", "busy").get("toolCalls")).toBe(total);
  });

  it("state survives stopping the runner and starting a new one", async () => {
    const namespace = uniqueNamespace("kv");
    const client = await PolicyAskClient.open(nc, namespace);
    const ask = (session: string) =>
      client.request("counter", "before_tool_call", {
        event: toolEvent(),
        context: toolContext(session),
      });

    const first = await runPolicy(counter, { nc: await connection(), namespace });
    expect(countOf(await ask("s-restart"))).toBe(1);
    expect(countOf(await ask("s-restart"))).toBe(2);
    expect(countOf(await ask("other"))).toBe(1);
    await first.stop();

    const second = await runPolicy(counter, { nc: await connection(), namespace });
    runners.push(second);
    expect(countOf(await ask("s-restart"))).toBe(3);
    expect(countOf(await ask("other"))).toBe(2);
  });

  it("answers HOOKBUS_STATE_CONFLICT when the compare-and-set keeps losing, and loses no update", async () => {
    const namespace = uniqueNamespace("kv");
    const tight = { maxAttempts: 1 };
    runners.push(
      await runPolicy(counter, { nc: await connection(), namespace, stateOptions: tight }),
    );
    runners.push(
      await runPolicy(counter, { nc: await connection(), namespace, stateOptions: tight }),
    );
    const client = await PolicyAskClient.open(nc, namespace);
    const replies = await Promise.all(
      Array.from({ length: 40 }, () =>
        client.request(
          "counter",
          "before_tool_call",
          { event: toolEvent(), context: toolContext("contended") },
          // As in the test above: on a loaded machine 40 contended updates can take seconds.
          15_000,
        ),
      ),
    );
    const conflicts = replies.filter((r) => r.errorCode === "HOOKBUS_STATE_CONFLICT");
    const successes = replies.filter((r) => r.errorCode === undefined);
    expect(conflicts.length).toBeGreaterThan(0);
    expect(conflicts[0]!.reply.error).toMatchObject({
      code: "HOOKBUS_STATE_CONFLICT",
      details: { policy: "counter", key: "toolCalls", attempts: 1 },
    });
    expect(conflicts.length + successes.length).toBe(40);
    const store = new KvSessionStateStore(nc, { namespace });
    expect(await createSessionState(store, "counter", "contended").get("toolCalls")).toBe(
      successes.length,
    );
  });
});

describe("KvSessionStateStore", () => {
  it("rejects with HOOKBUS_STATE_CONFLICT after maxAttempts lost races", async () => {
    const namespace = uniqueNamespace("kv");
    const stores = await Promise.all(
      [0, 1, 2].map(
        async () =>
          new KvSessionStateStore(await connection(), {
            namespace,
            maxAttempts: 2,
            retryBaseMs: 1,
            retryMaxMs: 1,
          }),
      ),
    );
    const results = await Promise.allSettled(
      Array.from({ length: 45 }, (_, i) =>
        createSessionState(stores[i % 3]!, "p", "s").update<number>("n", (prev) => (prev ?? 0) + 1),
      ),
    );
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(rejected.length).toBeGreaterThan(0);
    for (const r of rejected) expect(isHookbusError(r.reason, "HOOKBUS_STATE_CONFLICT")).toBe(true);
    const fulfilled = results.filter((r) => r.status === "fulfilled").length;
    expect(await createSessionState(stores[0]!, "p", "s").get("n")).toBe(fulfilled);
  });

  it("gives up with HOOKBUS_POLICY_TIMEOUT at the caller's deadline, also inside a contended compare-and-set loop", async () => {
    const namespace = uniqueNamespace("kv");
    const store = await KvSessionStateStore.open(await connection(), {
      namespace,
      maxAttempts: 1000,
      retryBaseMs: 50,
      retryMaxMs: 50,
    });
    const past = createSessionState(store, "p", "s", Date.now() - 1);
    for (const op of [past.get("n"), past.set("n", 1), past.update("n", () => 1)]) {
      await expect(op).rejects.toMatchObject({ code: "HOOKBUS_POLICY_TIMEOUT" });
    }
    // A writer that keeps the key moving: an update with 300 ms left must stop near 300 ms.
    const other = createSessionState(store, "p", "s");
    let moving = true;
    const mover = (async () => {
      while (moving) await other.update<number>("n", (prev) => (prev ?? 0) + 1);
    })();
    const started = Date.now();
    const bounded = createSessionState(store, "p", "s", started + 300);
    const outcome = await bounded
      .update<number>("n", (prev) => {
        // Lose every race: the mover writes between this read and the write.
        return (prev ?? 0) + 1000;
      })
      .then(
        () => "written",
        (error: unknown) => error,
      );
    moving = false;
    await mover;
    if (outcome !== "written") {
      expect(outcome).toMatchObject({ code: "HOOKBUS_POLICY_TIMEOUT" });
      // Margin for a loaded 2-core machine; unbounded, 1000 attempts x 50 ms would take ~25 s.
      expect(Date.now() - started).toBeLessThan(300 + 1500);
    }
    const ok = createSessionState(store, "p", "s2", Date.now() + 5000);
    await ok.set("n", 2);
    expect(await ok.update<number>("n", (prev) => (prev ?? 0) + 1)).toBe(3);
  });

  it("creates its bucket with file storage, one revision per key and the default TTL; keys are encoded", async () => {
    const namespace = uniqueNamespace("kv");
    const store = await KvSessionStateStore.open(nc, { namespace });
    const bucketName = new Subjects(namespace).stateBucket;
    expect(store.bucketName).toBe(bucketName);
    const session = "agent:main/slack dm.42";
    await createSessionState(store, "taint", session).set("read.untrusted web", true);
    const kv = await new Kvm(nc).open(bucketName);
    const status = await kv.status();
    expect(status.ttl).toBe(DEFAULT_STATE_TTL_MS);
    expect(status.history).toBe(1);
    expect(status.streamInfo.config.storage).toBe("file");
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    expect(keys).toEqual([`taint.${encodeToken(session)}.${encodeToken("read.untrusted web")}`]);
    expect(keys[0]).toBe("taint.agent=3Amain=2Fslack=20dm=2E42.read=2Euntrusted=20web");
  });

  it("uses the configured TTL when it creates the bucket (0 = keep forever)", async () => {
    const short = await KvSessionStateStore.open(nc, {
      namespace: uniqueNamespace("kv"),
      ttlMs: 60_000,
    });
    expect((await (await new Kvm(nc).open(short.bucketName)).status()).ttl).toBe(60_000);
    const forever = await KvSessionStateStore.open(nc, {
      namespace: uniqueNamespace("kv"),
      ttlMs: 0,
    });
    expect((await (await new Kvm(nc).open(forever.bucketName)).status()).ttl).toBe(0);
  });
});
