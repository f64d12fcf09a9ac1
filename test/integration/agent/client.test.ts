/**
 * The agent SDK on a real NATS server, without a coordinator: fast path, no-coordinator errors,
 * the wire contract of a call (against a responder that speaks docs/protocol.md), durable
 * observations, and the registry watch.
 */
import { randomBytes } from "node:crypto";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookbusClient, type HookbusClientOptions } from "../../../src/agent/index.js";
import { Bus } from "../../../src/bus/bus.js";
import { bodyHeaders } from "../../../src/bus/codec.js";
import { CallRequest } from "../../../src/bus/envelope.js";
import { Header } from "../../../src/bus/headers.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { ObservationRecord } from "../../../src/log/record.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";
import { uniqueNamespace } from "../../support/nats.js";
import { rejection } from "../../support/wait.js";

let server: NatsServerHandle;
let nc: NatsConnection;
const clients: HookbusClient[] = [];
const coordinators: Coordinator[] = [];

/** Observations are recorded by coordinators (agents never write the log). */
async function coordinator(ns: string): Promise<void> {
  coordinators.push(await startCoordinator({ nc, namespace: ns }));
}

beforeAll(async () => {
  server = await findNatsServer();
  nc = await connect({ servers: server.url });
});

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(coordinators.map((c) => c.stop()));
  await nc?.drain();
  await server?.stop();
});

function namespace(): string {
  return uniqueNamespace("agent");
}

async function client(ns: string, options: Partial<HookbusClientOptions> = {}) {
  const c = await HookbusClient.connect({ nc, namespace: ns, ...options });
  clients.push(c);
  return c;
}

async function until(check: () => boolean, timeoutMs = 3000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ctx = { agentId: "agent.1 *>", sessionKey: "sess 1", runId: "run-1" };
const toolCtx = { ...ctx, toolName: "read", toolCallId: "call_1" };
const toolEvent = { toolName: "read", toolCallId: "call_1", params: { path: "/x" } };

describe("agent SDK on NATS (no coordinator)", () => {
  it("fails closed with HOOKBUS_NO_REGISTRY where no registry was ever applied, nothing sent", async () => {
    const ns = namespace();
    const seen: string[] = [];
    const sub = nc.subscribe(`${ns}.call.>`, { callback: (_e, m) => void seen.push(m.subject) });
    for (const options of [{}, { fastPath: false }]) {
      const c = await client(ns, options);
      expect(c.registryRevision === 0 || options.fastPath === false).toBe(true);
      const error = await rejection(c.beforeToolCall(toolCtx, toolEvent));
      expect(isHookbusError(error, "HOOKBUS_NO_REGISTRY"), String(error)).toBe(true);
      expect(c.stats()).toMatchObject({ noRegistry: 1, fastPath: 0, coordinator: 0 });
    }
    await nc.flush();
    expect(seen).toEqual([]);
    sub.unsubscribe();
  });

  it("fast path: with an empty policy set, calls are answered locally, counted, nothing sent", async () => {
    const ns = namespace();
    await (await RegistryStore.open(nc, new Subjects(ns))).apply({ policies: [] });
    const seen: string[] = [];
    const sub = nc.subscribe(`${ns}.call.>`, { callback: (_e, m) => void seen.push(m.subject) });
    const c = await client(ns);
    expect(c.registryRevision).toBe(1);
    expect(await c.beforeToolCall(toolCtx, toolEvent)).toEqual({ outcome: "allow", decidedBy: {} });
    const result = await c.call("before_llm_call", ctx, {
      messages: [{ role: "user", content: "hi" }],
    });
    expect(result.source).toBe("fast-path");
    expect(c.stats()).toMatchObject({ fastPath: 2, coordinator: 0, noRegistry: 0 });
    await nc.flush();
    expect(seen).toEqual([]);
    sub.unsubscribe();
  });

  it("allowMissingRegistry: true opts in to the fast path where no registry was ever applied", async () => {
    const c = await client(namespace(), { allowMissingRegistry: true });
    expect(c.registryRevision).toBe(0);
    expect((await c.call("before_tool_call", toolCtx, toolEvent)).source).toBe("fast-path");
  });

  it("with a policy registered and no coordinator: HOOKBUS_COORDINATOR_UNAVAILABLE within the deadline, after retries", async () => {
    const ns = namespace();
    const bus = await Bus.open(nc, { namespace: ns });
    const store = await RegistryStore.open(nc, bus.subjects);
    await store.apply({ policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 1 }] });
    const c = await client(ns, { timeoutMs: 400 });
    expect(c.isFastPath("before_tool_call")).toBe(false);
    const started = Date.now();
    const error = await rejection(c.beforeToolCall(toolCtx, toolEvent));
    const elapsed = Date.now() - started;
    expect(isHookbusError(error, "HOOKBUS_COORDINATOR_UNAVAILABLE")).toBe(true);
    expect((error as { details: { attempts: number } }).details.attempts).toBeGreaterThan(1);
    expect(elapsed).toBeLessThan(1000);
    // Hooks without a policy still take the fast path.
    expect(
      (await c.call("before_tool_result", toolCtx, { ...toolEvent, result: 1, isError: false }))
        .source,
    ).toBe("fast-path");
  });

  it("a coordinator that starts while the agent retries answers the same call id", async () => {
    const ns = namespace();
    const c = await client(ns, { fastPath: false, timeoutMs: 3000, allowMissingRegistry: true });
    const bus = await Bus.open(nc, { namespace: ns });
    const call = c.call("before_agent_reply", ctx, { cleanedBody: "hi" }, { callId: "call-42" });
    // The scenario's timing (the client exposes no attempt count to wait for): the agent's first
    // attempts find no coordinator. Were it slower, the test would still pass, only through fewer
    // retries; the assertions below hold either way.
    await new Promise((r) => setTimeout(r, 150));
    const seen: { callId: string; headers: boolean; timeoutMs: number | undefined }[] = [];
    const sub = nc.subscribe(bus.subjects.call(ctx.agentId, "before_agent_reply"), {
      queue: bus.subjects.coordinatorQueue,
      callback: (_e, msg) => {
        void (async () => {
          const body = CallRequest.parse(await bus.codec.decodeMessage(msg));
          seen.push({
            callId: body.callId,
            headers: msg.headers !== undefined,
            timeoutMs: body.timeoutMs,
          });
          const reply = {
            callId: body.callId,
            hook: body.hook,
            decision: {
              outcome: "reply",
              reply: { text: "wizard" },
              decidedBy: { reply: ["wiz"] },
            },
            registryRevision: 0,
            recordSeq: 9,
          };
          const encoded = await bus.codec.encode(reply);
          msg.respond(encoded.data, { headers: bodyHeaders(encoded) });
        })();
      },
    });
    const result = await call;
    sub.unsubscribe();
    expect(result).toMatchObject({ source: "coordinator", callId: "call-42", recordSeq: 9 });
    expect(result.decision).toEqual({
      outcome: "reply",
      reply: { text: "wizard" },
      decidedBy: { reply: ["wiz"] },
    });
    expect(seen).toHaveLength(1);
    // Protocol 2: the time left is in the body of each send; a plain body has no header block.
    expect(seen[0]).toMatchObject({ callId: "call-42", headers: false });
    expect(seen[0]!.timeoutMs).toBeGreaterThan(0);
    expect(seen[0]!.timeoutMs).toBeLessThanOrEqual(3000);
  });

  it("an error reply becomes a HookbusError with the code of the Hookbus-Error-Code header", async () => {
    const ns = namespace();
    const c = await client(ns, { fastPath: false, allowMissingRegistry: true });
    const bus = await Bus.open(nc, { namespace: ns });
    const sub = nc.subscribe(bus.subjects.call(ctx.agentId, "before_llm_call"), {
      callback: (_e, msg) => {
        const body = {
          code: "HOOKBUS_LOG_UNAVAILABLE",
          message: "log stream full",
          details: { stream: "X" },
        };
        msg.respond(JSON.stringify(body), {
          headers: bodyHeaders(
            { data: new Uint8Array(), encoding: "json" },
            { [Header.ErrorCode]: body.code },
          ),
        });
      },
    });
    const error = await rejection(c.beforeLlmCall(ctx, { messages: [] }));
    sub.unsubscribe();
    expect(isHookbusError(error, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
    expect(error).toMatchObject({
      message: "log stream full",
      details: { stream: "X", remote: true },
    });
  });

  it("no decision before the deadline is HOOKBUS_CALL_TIMEOUT", async () => {
    const ns = namespace();
    const c = await client(ns, { fastPath: false, allowMissingRegistry: true });
    const bus = await Bus.open(nc, { namespace: ns });
    const sub = nc.subscribe(bus.subjects.call(ctx.agentId, "before_llm_call"), {
      callback: () => {},
    });
    const started = Date.now();
    const error = await rejection(c.beforeLlmCall(ctx, { messages: [] }, { timeoutMs: 200 }));
    sub.unsubscribe();
    expect(isHookbusError(error, "HOOKBUS_CALL_TIMEOUT")).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("observe() lands exactly once in the log stream, even when called twice with the same eventId", async () => {
    const ns = namespace();
    const bus = await Bus.open(nc, { namespace: ns });
    await coordinator(ns);
    const c = await client(ns);
    const event = {
      toolName: "read",
      toolCallId: "call_1",
      params: { path: "/x" },
      result: "ok",
      durationMs: 3,
    };
    const first = await c.observe("after_tool_call", toolCtx, event, { eventId: "ev-1" });
    const second = await c.observe("after_tool_call", toolCtx, event, { eventId: "ev-1" });
    expect(first).toMatchObject({
      eventId: "ev-1",
      duplicate: false,
      stream: bus.subjects.logStream,
    });
    expect(second).toMatchObject({ eventId: "ev-1", duplicate: true, seq: first.seq });
    const info = await bus.jsm.streams.info(bus.subjects.logStream);
    expect(info.state.messages).toBe(1);

    const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq: first.seq });
    expect(stored!.subject).toBe(
      bus.subjects.audit(ctx.agentId, ctx.sessionKey, "after_tool_call", "observed"),
    );
    const record = ObservationRecord.parse(
      await bus.codec.decodeMessage({ data: stored!.data, headers: stored!.header }),
    );
    expect(record).toMatchObject({
      v: 1,
      kind: "observation",
      eventId: "ev-1",
      hook: "after_tool_call",
      event,
      context: toolCtx,
    });
  });

  it("observe() of a 3 MB event round-trips through the codec (blob chunks) into the log", async () => {
    const ns = namespace();
    const bus = await Bus.open(nc, { namespace: ns });
    await coordinator(ns);
    const c = await client(ns, { timeoutMs: 20_000 });
    // Random text does not gzip below max_payload, so this takes the blob path.
    const big = randomBytes(2.3 * 1024 * 1024).toString("base64");
    expect(big.length).toBeGreaterThan(3 * 1024 * 1024);
    const event = { model: "m", assistantTexts: [big, "tail"] };
    const ack = await c.observe("llm_output", ctx, event);
    const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq: ack.seq });
    expect(stored!.header.get(Header.Encoding)).toBe("blob");
    const record = ObservationRecord.parse(
      await bus.codec.decodeMessage({ data: stored!.data, headers: stored!.header }),
    );
    expect(record.event).toEqual(event);
    expect(record.eventId).toBe(ack.eventId);
  });

  it("observe() retries until a coordinator answers, and fails with HOOKBUS_LOG_UNAVAILABLE only at its deadline", async () => {
    const ns = namespace();
    const bus = await Bus.open(nc, { namespace: ns });
    const c = await client(ns);
    const started = Date.now();
    const error = await rejection(c.observe("session_start", ctx, {}, { timeoutMs: 300 }));
    expect(isHookbusError(error, "HOOKBUS_LOG_UNAVAILABLE")).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect((error as { details: { attempts: number } }).details.attempts).toBeGreaterThan(1);

    const late = c.observe("session_start", ctx, {}, { timeoutMs: 5000, eventId: "late-1" });
    // The scenario's timing (no attempt count to wait for): the observation retries a while with
    // no coordinator before one starts.
    await new Promise((r) => setTimeout(r, 300));
    await coordinator(ns);
    expect(await late).toMatchObject({ eventId: "late-1", duplicate: false });
    expect((await bus.jsm.streams.info(bus.subjects.logStream)).state.messages).toBe(1);
  });

  it("a registry change flips the fast path within a short wait, both ways", async () => {
    const ns = namespace();
    const c = await client(ns, { timeoutMs: 300 });
    const bus = await Bus.open(nc, { namespace: ns });
    const store = await RegistryStore.open(nc, bus.subjects);
    // No registry yet: refused (HOOKBUS_NO_REGISTRY), so not answered locally either.
    expect(c.isFastPath("before_tool_call")).toBe(false);

    const applied = await store.apply({
      policies: [{ name: "shadowed", hooks: ["before_tool_call"], priority: 1, mode: "shadow" }],
    });
    // Not "until the fast path is off": it already is (no registry), so wait for the revision.
    await until(() => c.registryRevision === applied.revision, 10_000);
    expect(c.isFastPath("before_tool_call")).toBe(false);
    expect(c.isFastPath("after_llm_call")).toBe(true);
    expect(
      isHookbusError(
        await rejection(c.beforeToolCall(toolCtx, toolEvent)),
        "HOOKBUS_COORDINATOR_UNAVAILABLE",
      ),
    ).toBe(true);

    await store.apply({ policies: [] });
    await until(() => c.isFastPath("before_tool_call"), 10_000);
    expect((await c.call("before_tool_call", toolCtx, toolEvent)).source).toBe("fast-path");
  });

  it("a registry watch that dies is restarted; while it is down past the bound, calls skip the fast path", async () => {
    const ns = namespace();
    const subjects = new Subjects(ns);
    await (await RegistryStore.open(nc, subjects)).apply({ policies: [] });
    const c = await client(ns, { registryStaleAfterMs: 300 });
    expect(c.isFastPath("before_tool_call")).toBe(true);
    // Deleting the bucket leaves a KV watch waiting forever on the old stream, silently.
    await (await jetstreamManager(nc)).streams.delete(`KV_${subjects.registryBucket}`);
    await until(() => !c.isFastPath("before_tool_call"), 5000);
    expect(c.stats().registryWatch.watching).toBe(false);
    expect(c.stats().registryWatch.downForMs).toBeGreaterThan(300);
    // The bucket comes back with a policy on before_llm_call: the restarted watch sees it.
    await (
      await RegistryStore.open(nc, subjects)
    ).apply({ policies: [{ name: "p", hooks: ["before_llm_call"], priority: 1 }] });
    await until(() => c.stats().registryWatch.watching && c.isFastPath("before_tool_call"), 10_000);
    expect(c.isFastPath("before_llm_call")).toBe(false);
    expect(c.stats().registryWatch.restarts).toBeGreaterThan(0);
  });

  it("with fastPath: false every call goes to a coordinator", async () => {
    const ns = namespace();
    const c = await client(ns, { fastPath: false, timeoutMs: 200, allowMissingRegistry: true });
    expect(c.isFastPath("before_tool_call")).toBe(false);
    expect(
      isHookbusError(
        await rejection(c.beforeToolCall(toolCtx, toolEvent)),
        "HOOKBUS_COORDINATOR_UNAVAILABLE",
      ),
    ).toBe(true);
  });

  it("close() stops the registry watch and later calls are refused", async () => {
    const ns = namespace();
    const c = await HookbusClient.connect({ nc, namespace: ns });
    await c.close();
    await c.close();
    expect(c.isFastPath("before_tool_call")).toBe(false);
    expect(
      isHookbusError(
        await rejection(c.beforeToolCall(toolCtx, toolEvent)),
        "HOOKBUS_COORDINATOR_UNAVAILABLE",
      ),
    ).toBe(true);
    expect(nc.isClosed()).toBe(false);
  });
});
