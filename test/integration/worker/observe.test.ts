/**
 * Observational hooks reach policies from the log stream through one durable consumer per
 * (policy, hook): at least once, acked after the handler succeeded, redelivered after it threw,
 * shared between the policy's workers, and kept while no worker runs.
 */
import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { ensureLogStreams } from "../../../src/bus/streams.js";
import type { ObservationalHookName } from "../../../src/catalog/catalog.js";
import { RECORD_VERSION, type ObservationRecord } from "../../../src/log/record.js";
import { observerDurableName, runPolicy, type PolicyRunner } from "../../../src/worker/index.js";
import { connectTo, uniqueNamespace, until, useNatsServer } from "./harness.js";
import { createSessionState } from "../../../src/policy/state/session-state.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

const nats = useNatsServer();
let nc: NatsConnection;
const runners: PolicyRunner[] = [];
const fast = { retryDelayMs: 50, maxRetryDelayMs: 200 };

beforeAll(async () => {
  nc = await connectTo(nats.url());
});

afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await nc?.drain();
});

/** A namespace whose log stream exists (the coordinator creates it in production). */
async function logBus(): Promise<Bus> {
  const bus = await Bus.open(nc, { namespace: uniqueNamespace("obs") });
  await ensureLogStreams(bus.jsm, bus.subjects);
  return bus;
}

/** Publish an observation the way the agent SDK does: codec body, audit subject, message id. */
async function observe(
  bus: Bus,
  hook: ObservationalHookName,
  event: Record<string, unknown>,
  sessionKey = "sess-1",
  outcome: "observed" | "block" = "observed",
): Promise<string> {
  const eventId = randomUUID();
  const context = { agentId: "agent-1", sessionKey, runId: "run-1" };
  const record: ObservationRecord = {
    v: RECORD_VERSION,
    kind: "observation",
    eventId,
    hook,
    event,
    context,
    publishedAt: new Date().toISOString(),
  };
  const encoded = await bus.codec.encode(record);
  await bus.js.publish(bus.subjects.audit("agent-1", sessionKey, hook, outcome), encoded.data, {
    headers: bodyHeaders(encoded),
    msgID: eventId,
  });
  return eventId;
}

function consumerExists(bus: Bus, durable: string): Promise<boolean> {
  return bus.jsm.consumers.info(bus.subjects.logStream, durable).then(
    () => true,
    () => false,
  );
}

const toolResult = (toolName: string) => ({
  toolName,
  params: { url: "https://example.com" },
  result: "<html>",
  durationMs: 5,
});

describe("observational hooks", () => {
  it("delivers a published ObservationRecord to the handler with a typed event, context and the event id", async () => {
    const bus = await logBus();
    const seen: { toolName: string; sessionKey: string; callId: string }[] = [];
    const state = new MemorySessionStateStore();
    const policy = definePolicy({
      name: "taint",
      hooks: {
        async after_tool_call(event, ctx, tools) {
          seen.push({ toolName: event.toolName, sessionKey: ctx.sessionKey, callId: tools.callId });
          if (event.toolName === "web_fetch") await tools.state.set("tainted", true);
        },
      },
    });
    runners.push(
      await runPolicy(policy, { nc, namespace: bus.subjects.namespace, state, observe: fast }),
    );

    const eventId = await observe(bus, "after_tool_call", toolResult("web_fetch"), "s-taint");
    await until(() => seen.length > 0, 5000, "observation delivered");
    expect(seen[0]).toEqual({ toolName: "web_fetch", sessionKey: "s-taint", callId: eventId });
    expect(await createSessionState(state, "taint", "s-taint").get("tainted")).toBe(true);

    // Acked, so not delivered again: nothing pending or awaiting an ack at the server (this fails
    // if the handler's ack is lost, whatever the consumer's ack wait).
    const info = await until(
      async () => {
        const i = await bus.jsm.consumers.info(
          bus.subjects.logStream,
          observerDurableName(bus.subjects.namespace, "taint", "after_tool_call"),
        );
        return i.num_ack_pending === 0 && i.num_pending === 0 ? i : undefined;
      },
      5000,
      "the observation acked",
    );
    expect(info.num_redelivered).toBe(0);
    expect(seen).toHaveLength(1);
    expect(info.config.filter_subject).toBe(bus.subjects.auditFilter({ hook: "after_tool_call" }));
  });

  it("delivers refusals filed under block, skips the hook's error records, and widens a consumer made for `observed` only", async () => {
    const bus = await logBus();
    const durable = observerDurableName(bus.subjects.namespace, "refusals", "after_tool_call");
    // A consumer as an earlier version made it: observations filed under `observed` only.
    await bus.jsm.consumers.add(bus.subjects.logStream, {
      durable_name: durable,
      filter_subject: bus.subjects.auditFilter({ hook: "after_tool_call", kind: "observed" }),
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
    });
    const seen: (boolean | undefined)[] = [];
    const policy = definePolicy({
      name: "refusals",
      hooks: { after_tool_call: (event) => void seen.push(event.blocked) },
    });
    runners.push(await runPolicy(policy, { nc, namespace: bus.subjects.namespace, observe: fast }));
    const info = await bus.jsm.consumers.info(bus.subjects.logStream, durable);
    expect(info.config.filter_subject).toBe(bus.subjects.auditFilter({ hook: "after_tool_call" }));
    const refusal = { ...toolResult("send_email"), blocked: true, blockSource: "adapter" };
    await observe(bus, "after_tool_call", refusal, "s-1", "block");
    await bus.js.publish(bus.subjects.audit("agent-1", "s-1", "after_tool_call", "error"), "{}");
    await observe(bus, "after_tool_call", toolResult("web_fetch"), "s-1");
    await until(() => seen.length >= 2, 5000, "both observations delivered");
    expect(seen).toEqual([true, undefined]);
  });

  it("redelivers after a throwing handler, then acks", async () => {
    const bus = await logBus();
    const attempts: string[] = [];
    const policy = definePolicy({
      name: "flaky",
      hooks: {
        session_end(event) {
          attempts.push(String(event.sessionId));
          if (attempts.length === 1) throw new Error("first attempt fails");
        },
      },
    });
    const runner = await runPolicy(policy, {
      nc,
      namespace: bus.subjects.namespace,
      state: new MemorySessionStateStore(),
      observe: fast,
    });
    runners.push(runner);
    await observe(bus, "session_end", { sessionId: "x1", messageCount: 3 });
    await until(() => attempts.length >= 2, 5000, "redelivery");
    // Acked (nothing left pending at the server): no further delivery can come.
    const info = await until(
      async () => {
        const i = await bus.jsm.consumers.info(
          bus.subjects.logStream,
          observerDurableName(bus.subjects.namespace, "flaky", "session_end"),
        );
        return i.num_ack_pending === 0 ? i : undefined;
      },
      5000,
      "the redelivered record acked",
    );
    expect(attempts).toEqual(["x1", "x1"]);
    expect(info.num_pending).toBe(0);
  });

  it("gives each record to one of the policy's workers, only for the hook it handles", async () => {
    const bus = await logBus();
    const byWorker = [new Set<string>(), new Set<string>()];
    const other: string[] = [];
    for (const index of [0, 1]) {
      const policy = definePolicy({
        name: "audit-tools",
        hooks: {
          after_tool_call(event) {
            byWorker[index]!.add(String(event.params["id"]));
          },
          agent_end(event) {
            other.push(String(event.success));
          },
        },
      });
      const own = await nats.connect();
      runners.push(
        await runPolicy(policy, {
          nc: own,
          namespace: bus.subjects.namespace,
          state: new MemorySessionStateStore(),
          observe: fast,
        }),
      );
    }
    const ids = Array.from({ length: 20 }, (_, i) => `e${i}`);
    for (const id of ids) await observe(bus, "after_tool_call", { toolName: "t", params: { id } });
    await observe(bus, "agent_end", { success: true });
    await observe(bus, "llm_input", { prompt: "not handled by this policy" });
    await until(
      () => byWorker[0]!.size + byWorker[1]!.size >= ids.length && other.length === 1,
      5000,
      "all delivered",
    );
    // Every record acked by the one worker it went to: nothing left to redeliver to the other.
    const shared = await until(
      async () => {
        const i = await bus.jsm.consumers.info(
          bus.subjects.logStream,
          observerDurableName(bus.subjects.namespace, "audit-tools", "after_tool_call"),
        );
        return i.num_ack_pending === 0 && i.num_pending === 0 ? i : undefined;
      },
      5000,
      "all records acked",
    );
    expect(shared.num_redelivered).toBe(0);
    expect(new Set([...byWorker[0]!, ...byWorker[1]!])).toEqual(new Set(ids));
    expect(byWorker[0]!.size + byWorker[1]!.size).toBe(ids.length); // none handled by both
    expect(other).toEqual(["true"]);
  });

  it("keeps records published while no worker runs, for the next worker", async () => {
    const bus = await logBus();
    const seen: string[] = [];
    const policy = definePolicy({
      name: "durable",
      hooks: {
        llm_output(event) {
          seen.push(String(event.model));
        },
      },
    });
    const first = await runPolicy(policy, {
      nc,
      namespace: bus.subjects.namespace,
      state: new MemorySessionStateStore(),
      observe: fast,
    });
    await observe(bus, "llm_output", { model: "before-stop" });
    await until(() => seen.length === 1, 5000, "first record");
    await first.stop();

    await observe(bus, "llm_output", { model: "while-down" });
    runners.push(
      await runPolicy(policy, {
        nc,
        namespace: bus.subjects.namespace,
        state: new MemorySessionStateStore(),
        observe: fast,
      }),
    );
    await until(() => seen.length === 2, 5000, "record published while down");
    expect(seen).toEqual(["before-stop", "while-down"]);
  });

  it("starts consuming once the log stream appears when the worker started first", async () => {
    const bus = await Bus.open(nc, { namespace: uniqueNamespace("obs") }); // no log stream yet
    const seen: string[] = [];
    const policy = definePolicy({
      name: "early",
      hooks: {
        agent_end(event) {
          seen.push(String(event.error));
        },
      },
    });
    runners.push(
      await runPolicy(policy, {
        nc,
        namespace: bus.subjects.namespace,
        state: new MemorySessionStateStore(),
        observe: { ...fast, streamRetryMs: 100 },
      }),
    );
    await ensureLogStreams(bus.jsm, bus.subjects); // the coordinator starts later
    const durable = observerDurableName(bus.subjects.namespace, "early", "agent_end");
    await until(() => consumerExists(bus, durable), 5000, "consumer created");
    await observe(bus, "agent_end", { success: false, error: "after the stream appeared" });
    await until(() => seen.length === 1, 5000, "record delivered");
    expect(seen).toEqual(["after the stream appeared"]);
  });

  it("drops a record whose event fails its schema instead of retrying it forever", async () => {
    const bus = await logBus();
    const seen: string[] = [];
    const policy = definePolicy({
      name: "picky",
      hooks: {
        after_tool_call(event) {
          seen.push(event.toolName);
        },
      },
    });
    runners.push(
      await runPolicy(policy, {
        nc,
        namespace: bus.subjects.namespace,
        state: new MemorySessionStateStore(),
        observe: fast,
      }),
    );
    await observe(bus, "after_tool_call", { params: {} }); // no toolName
    await observe(bus, "after_tool_call", toolResult("ok"));
    await until(() => seen.length === 1, 5000, "valid record");
    // Both records acked (the invalid one dropped, not left for redelivery).
    const info = await until(
      async () => {
        const i = await bus.jsm.consumers.info(
          bus.subjects.logStream,
          observerDurableName(bus.subjects.namespace, "picky", "after_tool_call"),
        );
        return i.num_ack_pending === 0 && i.delivered.stream_seq >= 2 ? i : undefined;
      },
      5000,
      "both records acked",
    );
    expect(seen).toEqual(["ok"]);
    expect(info.num_redelivered).toBe(0);
  });
});
