/**
 * Workers as processes of a deployment see them: several runners of one policy share the load
 * (queue group), stop() drains in-flight work before it resolves, and a runner keeps serving
 * after its NATS server restarts.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runPolicy, type PolicyRunner } from "../../../src/worker/index.js";
import {
  gate,
  PolicyAskClient,
  toolContext,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
} from "./harness.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

// This file restarts its server, so it must own it (NATS_URL would be someone else's).
const nats = useNatsServer({ own: true });
const runners: PolicyRunner[] = [];

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
});

const connection = () => nats.connect();

describe("scale", () => {
  it("three runners of one policy, each on its own connection, share a load of requests", async () => {
    const namespace = uniqueNamespace();
    const handled = [0, 0, 0];
    for (const index of [0, 1, 2]) {
      const policy = definePolicy({
        name: "shared",
        hooks: {
          async before_tool_call() {
            handled[index]!++;
            await new Promise((r) => setTimeout(r, 2));
            return { params: { worker: index } };
          },
        },
      });
      runners.push(
        await runPolicy(policy, {
          nc: await connection(),
          namespace,
          state: new MemorySessionStateStore(),
        }),
      );
    }
    const client = await PolicyAskClient.open(await connection(), namespace);
    const total = 90;
    const replies = await Promise.all(
      Array.from({ length: total }, () =>
        client.request("shared", "before_tool_call", {
          event: toolEvent(),
          context: toolContext(),
        }),
      ),
    );
    // Every request answered exactly once, by one of the three.
    expect(replies.every((r) => r.errorCode === undefined)).toBe(true);
    expect(handled.reduce((a, b) => a + b, 0)).toBe(total);
    for (const count of handled) expect(count).toBeGreaterThan(0);
    const byWorker = [0, 1, 2].map(
      (w) =>
        replies.filter(
          (r) => (r.reply.verdict as { params: { worker: number } }).params.worker === w,
        ).length,
    );
    expect(byWorker).toEqual(handled);
  });

  it("caps the handlers running at once at `concurrency`", async () => {
    const namespace = uniqueNamespace();
    let running = 0;
    let peak = 0;
    const policy = definePolicy({
      name: "capped",
      hooks: {
        async before_tool_call() {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 20));
          running--;
        },
      },
    });
    const nc = await connection();
    runners.push(
      await runPolicy(policy, {
        nc,
        namespace,
        state: new MemorySessionStateStore(),
        concurrency: 3,
      }),
    );
    const client = await PolicyAskClient.open(nc, namespace);
    await Promise.all(
      Array.from({ length: 12 }, () =>
        client.request("capped", "before_tool_call", {
          event: toolEvent(),
          context: toolContext(),
        }),
      ),
    );
    expect(peak).toBe(3);
  });
});

describe("stop()", () => {
  it("waits for an in-flight slow handler to reply before it resolves, then takes no more requests", async () => {
    const namespace = uniqueNamespace();
    const release = gate();
    let started = 0;
    const policy = definePolicy({
      name: "slow",
      hooks: {
        async before_tool_call() {
          started++;
          await release.promise;
          return { block: true, blockReason: "finished after stop()" };
        },
      },
    });
    const nc = await connection();
    const runner = await runPolicy(policy, { nc, namespace, state: new MemorySessionStateStore() });
    const client = await PolicyAskClient.open(await connection(), namespace);

    const pending = client.request("slow", "before_tool_call", {
      event: toolEvent(),
      context: toolContext(),
    });
    await until(() => started === 1, 3000, "handler started");

    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    // "Nothing happens within 200 ms" (a legit sleep): stop() does not return while the
    // handler it waits for is held open.
    await new Promise((r) => setTimeout(r, 200));
    expect(stopped).toBe(false); // still waiting for the handler

    release.open();
    const answer = await pending;
    expect(answer.reply.verdict).toEqual({ block: true, blockReason: "finished after stop()" });
    await stopping;
    expect(stopped).toBe(true);
    expect(await runner.stop()).toBeUndefined(); // idempotent

    // Drained: nobody listens on the policy's subject any more.
    await expect(
      client.request(
        "slow",
        "before_tool_call",
        { event: toolEvent(), context: toolContext() },
        1000,
      ),
    ).rejects.toThrow(/no responders/i);
    expect(started).toBe(1);
  });

  it("answers requests that arrived before stop() even when they were queued behind the concurrency limit", async () => {
    const namespace = uniqueNamespace();
    const release = gate();
    let started = 0;
    const policy = definePolicy({
      name: "queued",
      hooks: {
        async before_tool_call(event) {
          started++;
          await release.promise;
          return { params: { n: event.params["n"] } };
        },
      },
    });
    const nc = await connection();
    const runner = await runPolicy(policy, {
      nc,
      namespace,
      state: new MemorySessionStateStore(),
      concurrency: 1,
    });
    const client = await PolicyAskClient.open(await connection(), namespace);
    const pending = [1, 2, 3].map((n) =>
      client.request("queued", "before_tool_call", {
        event: toolEvent("t", { n }),
        context: toolContext(),
      }),
    );
    await until(() => started === 1, 3000, "first handler started");
    // The other two are delivered and waiting for the slot (in flight counts queued handlers).
    await until(
      async () => {
        const gauge = await runner.metrics.getSingleMetric("hookbus_worker_in_flight")?.get();
        return gauge?.values[0]?.value === 3;
      },
      5000,
      "three requests in flight",
    );
    const stopping = runner.stop();
    release.open();
    const answers = await Promise.all(pending);
    await stopping;
    expect(answers.map((a) => (a.reply.verdict as { params: { n: number } }).params.n)).toEqual([
      1, 2, 3,
    ]);
  });
});

describe("reconnect", () => {
  it("keeps serving after the NATS server restarts", async () => {
    const namespace = uniqueNamespace();
    const policy = definePolicy({
      name: "sturdy",
      hooks: { before_tool_call: () => ({ block: true, blockReason: "still here" }) },
    });
    const nc = await connection();
    runners.push(await runPolicy(policy, { nc, namespace, state: new MemorySessionStateStore() }));
    const clientNc = await connection();
    const client = await PolicyAskClient.open(clientNc, namespace);
    const ask = () =>
      client.request(
        "sturdy",
        "before_tool_call",
        { event: toolEvent(), context: toolContext() },
        1000,
      );
    expect((await ask()).reply.verdict).toEqual({ block: true, blockReason: "still here" });

    await nats.handle().kill();
    await nats.handle().start();
    // The client re-subscribes on reconnect; ask until the worker is back.
    let answer: Awaited<ReturnType<typeof ask>> | undefined;
    const end = Date.now() + 10_000;
    while (answer === undefined && Date.now() < end) {
      answer = await ask().catch(() => undefined);
      if (answer === undefined) await new Promise((r) => setTimeout(r, 100)); // poll interval
    }
    expect(answer?.reply.verdict).toEqual({ block: true, blockReason: "still here" });
  });
});
