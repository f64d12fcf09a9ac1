/**
 * The agent SDK end to end: coordinator + policy workers + the log, on a real NATS server,
 * through the public entry points (HookbusClient, startCoordinator, definePolicy/runPolicy).
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  HookbusBlockedError,
  HookbusClient,
  isHookbusBlockedError,
} from "../../../src/agent/index.js";
import { Bus } from "../../../src/bus/bus.js";
import { startCoordinator } from "../../../src/coordinator/index.js";
import { DecisionRecord } from "../../../src/log/record.js";
import type { RegistryDocumentInput } from "../../../src/registry/document.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/nats.js";
import { observerDurableName, runPolicy } from "../../../src/worker/index.js";
import { uniqueNamespace } from "../../support/nats.js";
import { rejection, until } from "../../support/wait.js";
import { definePolicy, type Policy } from "../../../src/policy/policy.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

let server: NatsServerHandle;
let nc: NatsConnection;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  server = await findNatsServer();
  nc = await connect({ servers: server.url });
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  await nc?.drain();
  await server?.stop();
});

/** A namespace with a coordinator, the given policies running and registered, and a client. */
async function pipeline(registry: RegistryDocumentInput, policies: Policy[]) {
  const namespace = uniqueNamespace("e2e");
  const bus = await Bus.open(nc, { namespace });
  const store = await RegistryStore.open(nc, bus.subjects);
  await store.apply(registry);
  const coordinator = await startCoordinator({ nc, namespace });
  cleanups.push(() => coordinator.stop());
  for (const policy of policies) {
    const runner = await runPolicy(policy, { nc, namespace, state: new MemorySessionStateStore() });
    cleanups.push(() => runner.stop());
  }
  const client = await HookbusClient.connect({ nc, namespace, timeoutMs: 5000 });
  cleanups.push(() => client.close());
  return { bus, client, store };
}

async function decisionRecord(bus: Bus, seq: number): Promise<DecisionRecord> {
  const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq });
  return DecisionRecord.parse(
    await bus.codec.decodeMessage({ data: stored!.data, headers: stored!.header }),
  );
}

const ctx = { agentId: "agent-e2e", sessionKey: "session-1", runId: "run-1" };
const toolCtx = (toolCallId?: string) => ({
  ...ctx,
  toolName: "shell",
  ...(toolCallId === undefined ? {} : { toolCallId }),
});
const toolEvent = (toolCallId?: string) => ({
  toolName: "shell",
  params: { cmd: "ls" },
  ...(toolCallId === undefined ? {} : { toolCallId }),
});

describe("agent SDK end to end (coordinator + workers)", () => {
  it("a blocking policy: HookbusBlockedError with its reason and name, and the decision is in the log", async () => {
    const guard = definePolicy({
      name: "shell-guard",
      version: "1.0.0",
      hooks: {
        before_tool_call: (event) =>
          event.toolName === "shell"
            ? { block: true, blockReason: "no shell in production" }
            : undefined,
      },
    });
    const { bus, client } = await pipeline(
      { policies: [{ name: "shell-guard", hooks: ["before_tool_call"], priority: 10 }] },
      [guard],
    );
    const error = await rejection(client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1")));
    expect(error).toBeInstanceOf(HookbusBlockedError);
    expect(isHookbusBlockedError(error)).toBe(true);
    expect(error).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      hook: "before_tool_call",
      blockReason: "no shell in production",
      blockedBy: "shell-guard",
      source: "decision",
    });

    const result = await client.call("before_tool_call", toolCtx("call_2"), toolEvent("call_2"));
    expect(result.source).toBe("coordinator");
    expect(result.decision.outcome).toBe("block");
    const record = await decisionRecord(bus, result.recordSeq!);
    expect(record).toMatchObject({ callId: result.callId, hook: "before_tool_call" });
    expect(record.decision).toEqual(result.decision);
  });

  it("the after_llm_call gate: allowlist of one id; another id and a call without id are blocked without reaching before_tool_call; the next LLM call clears it", async () => {
    const asked: string[] = [];
    const allowlist = definePolicy({
      name: "allowlist",
      hooks: {
        after_llm_call: (event) => ({
          toolCalls: event.toolCalls
            .filter((c) => "id" in c && c.id === "call_ok")
            .map((c) => ({ id: c.id })),
        }),
      },
    });
    const toolPolicy = definePolicy({
      name: "tool-audit",
      hooks: {
        before_tool_call: (event) => {
          asked.push(event.toolCallId ?? "(none)");
          return undefined;
        },
      },
    });
    const { client } = await pipeline(
      {
        policies: [
          { name: "allowlist", hooks: ["after_llm_call"], priority: 10 },
          { name: "tool-audit", hooks: ["before_tool_call"], priority: 5 },
        ],
      },
      [allowlist, toolPolicy],
    );

    const after = client.afterLlmCall(ctx, {
      toolCalls: [
        { id: "call_ok", name: "shell", arguments: { cmd: "ls" } },
        { id: "call_bad", name: "shell", arguments: { cmd: "rm -rf /" } },
      ],
    });
    // Started in the same tick as after_llm_call: each waits for its decision.
    const ok = client.beforeToolCall(toolCtx("call_ok"), toolEvent("call_ok"));
    const bad = rejection(client.beforeToolCall(toolCtx("call_bad"), toolEvent("call_bad")));
    const noId = rejection(client.beforeToolCall(toolCtx(), toolEvent()));

    const decision = await after;
    expect(decision.toolCalls?.map((c) => ("id" in c ? c.id : undefined))).toEqual(["call_ok"]);
    expect((await ok).outcome).toBe("allow");
    const badError = (await bad) as HookbusBlockedError;
    expect(badError).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      source: "after_llm_call_gate",
      blockedBy: "allowlist",
    });
    expect(badError.blockReason).toMatch(/"call_bad" is not in the after_llm_call allowlist/);
    const noIdError = (await noId) as HookbusBlockedError;
    expect(noIdError.blockReason).toMatch(
      /without an id is blocked while an after_llm_call allowlist is active/,
    );
    expect(asked).toEqual(["call_ok"]);

    // Next turn: before_llm_call (no policy: fast path) clears the gate.
    await client.beforeLlmCall(ctx, {
      messages: [{ role: "user", content: "go on" }],
      iteration: 1,
    });
    expect((await client.beforeToolCall(toolCtx("call_bad"), toolEvent("call_bad"))).outcome).toBe(
      "allow",
    );
    expect(asked).toEqual(["call_ok", "call_bad"]);
  });

  it("a blocking after_llm_call blocks the turn's tool calls and names its policy", async () => {
    const stopper = definePolicy({
      name: "taint",
      hooks: {
        after_llm_call: () => ({ block: true, blockReason: "session read untrusted web content" }),
      },
    });
    const { client } = await pipeline(
      { policies: [{ name: "taint", hooks: ["after_llm_call"], priority: 1 }] },
      [stopper],
    );
    const after = rejection(
      client.afterLlmCall(ctx, { toolCalls: [{ id: "c1", name: "send_email" }] }),
    );
    const tool = rejection(client.beforeToolCall(toolCtx("c1"), toolEvent("c1")));
    expect(await after).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      hook: "after_llm_call",
      blockedBy: "taint",
    });
    expect(await tool).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      source: "after_llm_call_gate",
      blockedBy: "taint",
      blockReason:
        "after_llm_call blocked this turn's tool calls: session read untrusted web content",
    });
  });
  it("observe() reaches a policy's observational handler through the log, once per eventId", async () => {
    const seen: { text: string | undefined; callId: string }[] = [];
    const watcher = definePolicy({
      name: "output-watch",
      hooks: {
        llm_output: (event, _ctx, tools) => {
          seen.push({ text: event.assistantTexts?.[0], callId: tools.callId });
        },
      },
    });
    const { bus, client } = await pipeline({ policies: [] }, [watcher]);
    const first = await client.observe(
      "llm_output",
      ctx,
      { assistantTexts: ["hello"] },
      { eventId: "obs-1" },
    );
    const again = await client.observe(
      "llm_output",
      ctx,
      { assistantTexts: ["hello"] },
      { eventId: "obs-1" },
    );
    expect(again).toMatchObject({ duplicate: true, seq: first.seq });
    await until(() => seen.length > 0, 5000, "the observation delivered");
    // Once per eventId: the log holds one observation, and the observer acked it (nothing pending
    // or awaiting an ack at the server), so no second delivery can come.
    expect((await bus.jsm.streams.info(bus.subjects.logStream)).state.messages).toBe(1);
    const consumer = await until(
      async () => {
        const info = await bus.jsm.consumers.info(
          bus.subjects.logStream,
          observerDurableName(bus.subjects.namespace, "output-watch", "llm_output"),
        );
        return info.num_ack_pending === 0 && info.num_pending === 0 ? info : undefined;
      },
      5000,
      "the observation acked",
    );
    expect(consumer.num_redelivered).toBe(0);
    expect(seen).toEqual([{ text: "hello", callId: "obs-1" }]);
  });
});
