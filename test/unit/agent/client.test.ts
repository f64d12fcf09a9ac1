/**
 * The client's routing without NATS: a CallTransport written here (the SDK's own interface for
 * in-process transports) records every round trip and answers when the test says so.
 */
import { describe, expect, it } from "vitest";
import type { Decision, HookContext, ModifyingHookName } from "../../../src/catalog/catalog.js";
import {
  HookbusBlockedError,
  HookbusClient,
  isHookbusBlockedError,
} from "../../../src/agent/index.js";
import { measureFastPath } from "../../../bench/fast-path.js";
import { HookbusError, isHookbusError } from "../../../src/foundation/errors.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { rejection } from "../../support/wait.js";
import { staticRegistryView } from "../../../src/agent/registry-view.js";
import { type CallTransport } from "../../../src/agent/transport.js";
import { type ObservationSink } from "../../../src/agent/types.js";

interface Pending {
  hook: ModifyingHookName;
  event: Record<string, unknown>;
  callId: string;
  resolve: (decision: Record<string, unknown>) => void;
  reject: (error: unknown) => void;
}

/** Answers each call when the test resolves it; `auto` answers allow at once. */
class ScriptedTransport implements CallTransport {
  readonly calls: Pending[] = [];
  constructor(
    private readonly auto: Partial<Record<ModifyingHookName, Record<string, unknown>>> = {},
  ) {}
  call<H extends ModifyingHookName>(
    hook: H,
    _context: unknown,
    event: unknown,
    callId: string,
  ): Promise<{ decision: Decision<H>; registryRevision: number; recordSeq: number }> {
    return new Promise((resolve, reject) => {
      const entry: Pending = {
        hook,
        event: event as Record<string, unknown>,
        callId,
        resolve: (decision) =>
          resolve({
            decision: decision as Decision<H>,
            registryRevision: 7,
            recordSeq: this.calls.length,
          }),
        reject,
      };
      this.calls.push(entry);
      const auto = this.auto[hook];
      if (auto !== undefined) entry.resolve(auto);
    });
  }
  hooks(): string[] {
    return this.calls.map((c) => c.hook);
  }
}

function registryWith(...hooks: ModifyingHookName[]) {
  return staticRegistryView(
    new RegistrySnapshot(3, {
      policies: [{ name: "p", hooks, priority: 1, timeoutMs: 1000, mode: "enforce" }],
    }),
  );
}

const ctx = { agentId: "agent-1", sessionKey: "s-1", runId: "run-1" };
const toolCtx = (id?: string): HookContext<"before_tool_call"> => ({
  ...ctx,
  toolName: "read",
  ...(id ? { toolCallId: id } : {}),
});
const toolEvent = (id?: string) => ({
  toolName: "read",
  params: { path: "/x" },
  ...(id === undefined ? {} : { toolCallId: id }),
});
const afterEvent = {
  toolCalls: [
    { id: "call_1", name: "read" },
    { id: "call_2", name: "rm" },
  ],
};
const allow = { outcome: "allow", decidedBy: {} };
const tick = () => new Promise((r) => setTimeout(r, 10));

describe("HookbusClient (in-process transport)", () => {
  it("validates context and event before any round trip", async () => {
    const transport = new ScriptedTransport();
    const client = HookbusClient.create({ transport });
    const badCtx = await rejection(
      client.beforeToolCall({ agentId: "", sessionKey: "s", runId: "r" }, toolEvent("c")),
    );
    expect(isHookbusError(badCtx, "HOOKBUS_INVALID_CONTEXT")).toBe(true);
    const badEvent = await rejection(
      client.beforeToolCall(toolCtx(), { toolName: "", params: {} }),
    );
    expect(isHookbusError(badEvent, "HOOKBUS_INVALID_EVENT")).toBe(true);
    const badHook = await rejection(
      client.decide("after_tool_call" as never, ctx as never, {} as never),
    );
    expect(isHookbusError(badHook, "HOOKBUS_NOT_MODIFYING_HOOK")).toBe(true);
    const badId = await rejection(
      client.beforeAgentReply(ctx, { cleanedBody: "hi" }, { callId: "a\nb" }),
    );
    expect(isHookbusError(badId, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    const badTimeout = await rejection(
      client.beforeAgentReply(ctx, { cleanedBody: "hi" }, { timeoutMs: 0 }),
    );
    expect(isHookbusError(badTimeout, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    expect(transport.calls).toHaveLength(0);
  });

  it("fast path: no policy for the hook answers allow locally; a policy (any mode) makes a round trip", async () => {
    const transport = new ScriptedTransport({ before_tool_call: allow });
    const client = HookbusClient.create({ transport, registry: registryWith("before_tool_call") });
    const local = await client.call("before_response_emit", ctx, {
      content: "x",
      allContent: ["x"],
    });
    expect(local).toMatchObject({
      source: "fast-path",
      decision: { outcome: "allow", decidedBy: {} },
      registryRevision: 3,
    });
    expect(client.isFastPath("before_response_emit")).toBe(true);
    expect(client.isFastPath("before_tool_call")).toBe(false);
    const remote = await client.call("before_tool_call", toolCtx("c"), toolEvent("c"), {
      callId: "my-call",
    });
    expect(remote).toMatchObject({ source: "coordinator", callId: "my-call", recordSeq: 1 });
    expect(transport.hooks()).toEqual(["before_tool_call"]);
  });

  it("a blocking decision: typed methods throw HookbusBlockedError with the reason, decide() returns it", async () => {
    const block = {
      outcome: "block",
      blockReason: "no rm",
      blockedBy: "guard",
      decidedBy: { block: ["guard"] },
    };
    const client = HookbusClient.create({
      transport: new ScriptedTransport({ before_tool_call: block }),
    });
    const error = await rejection(client.beforeToolCall(toolCtx("c"), toolEvent("c")));
    expect(error).toBeInstanceOf(HookbusBlockedError);
    expect(error).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      hook: "before_tool_call",
      blockReason: "no rm",
      blockedBy: "guard",
      source: "decision",
      decision: block,
    });
    expect((error as Error).message).toMatch(/before_tool_call blocked by policy "guard": no rm/);
    expect(await client.decide("before_tool_call", toolCtx("c"), toolEvent("c"))).toEqual(block);
  });

  it("isHookbusBlockedError recognises a block from another copy of the module (no instanceof)", () => {
    const foreign = Object.assign(new Error("x"), {
      isHookbusBlocked: true,
      code: "HOOKBUS_BLOCKED",
      hook: "before_tool_call",
      decision: { outcome: "block", decidedBy: {} },
    });
    expect(isHookbusBlockedError(foreign)).toBe(true);
    expect(isHookbusBlockedError(new HookbusError("HOOKBUS_BLOCKED", "x"))).toBe(false);
    expect(isHookbusBlockedError(null)).toBe(false);
  });

  it("the gate is stored synchronously: a beforeToolCall started right after afterLlmCall waits for it", async () => {
    const transport = new ScriptedTransport({ before_tool_call: allow });
    const client = HookbusClient.create({ transport });
    const after = client.afterLlmCall(ctx, afterEvent);
    // Not awaited: the tool calls start in the same tick.
    const allowed = client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"));
    const denied = rejection(client.beforeToolCall(toolCtx("call_2"), toolEvent("call_2")));
    const noId = rejection(client.beforeToolCall(toolCtx(), toolEvent()));
    await tick();
    expect(transport.hooks()).toEqual(["after_llm_call"]); // nobody went ahead
    transport.calls[0]!.resolve({
      outcome: "modify",
      decidedBy: { toolCalls: ["allowlist"] },
      toolCalls: [{ id: "call_1", name: "read" }],
    });
    await after;
    expect(await allowed).toEqual(allow);
    const d = await denied;
    expect(d).toMatchObject({
      code: "HOOKBUS_BLOCKED",
      source: "after_llm_call_gate",
      blockedBy: "allowlist",
    });
    expect((d as HookbusBlockedError).blockReason).toMatch(
      /"call_2" is not in the after_llm_call allowlist/,
    );
    expect(((await noId) as HookbusBlockedError).blockReason).toMatch(/without an id/);
    // Only the allowed call reached before_tool_call.
    expect(transport.hooks()).toEqual(["after_llm_call", "before_tool_call"]);
    expect(transport.calls[1]!.event.toolCallId).toBe("call_1");
  });

  it("the gate applies on the fast path too (no policy on before_tool_call)", async () => {
    const transport = new ScriptedTransport({
      after_llm_call: {
        outcome: "modify",
        decidedBy: { toolCalls: ["p"] },
        toolCalls: [{ id: "call_1", name: "read" }],
      },
    });
    const client = HookbusClient.create({ transport, registry: registryWith("after_llm_call") });
    await client.afterLlmCall(ctx, afterEvent);
    expect(await client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"))).toEqual(allow);
    await expect(
      client.beforeToolCall(toolCtx("call_2"), toolEvent("call_2")),
    ).rejects.toMatchObject({
      code: "HOOKBUS_BLOCKED",
    });
    const gated = await client.call("before_tool_call", toolCtx("call_2"), toolEvent("call_2"));
    expect(gated.source).toBe("after_llm_call_gate");
    expect(gated.decision).toMatchObject({
      outcome: "block",
      blockedBy: "p",
      decidedBy: { block: ["p"] },
    });
  });

  it("a failed after_llm_call blocks the turn's tool calls (fail closed), and beforeLlmCall clears the gate", async () => {
    const transport = new ScriptedTransport({ before_tool_call: allow, before_llm_call: allow });
    const client = HookbusClient.create({ transport });
    const after = client.afterLlmCall(ctx, afterEvent);
    const tool = rejection(client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1")));
    transport.calls[0]!.reject(new HookbusError("HOOKBUS_COORDINATOR_UNAVAILABLE", "nobody home"));
    expect(isHookbusError(await rejection(after), "HOOKBUS_COORDINATOR_UNAVAILABLE")).toBe(true);
    const blocked = (await tool) as HookbusBlockedError;
    expect(blocked.code).toBe("HOOKBUS_BLOCKED");
    expect(blocked.blockReason).toMatch(
      /after_llm_call did not decide \(HOOKBUS_COORDINATOR_UNAVAILABLE/,
    );

    await client.beforeLlmCall(ctx, { messages: [] });
    expect(await client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"))).toEqual(allow);
  });

  it("an after_llm_call with an invalid event still gates the run (fail closed)", async () => {
    const transport = new ScriptedTransport({ before_tool_call: allow });
    const client = HookbusClient.create({ transport });
    const error = await rejection(client.afterLlmCall(ctx, { toolCalls: "nope" } as never));
    expect(isHookbusError(error, "HOOKBUS_INVALID_EVENT")).toBe(true);
    await expect(
      client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1")),
    ).rejects.toMatchObject({
      code: "HOOKBUS_BLOCKED",
      source: "after_llm_call_gate",
    });
  });

  it("a gate wait longer than the tool call's deadline is a HOOKBUS_CALL_TIMEOUT", async () => {
    const client = HookbusClient.create({ transport: new ScriptedTransport() });
    void client.afterLlmCall(ctx, afterEvent).catch(() => {});
    const error = await rejection(
      client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"), { timeoutMs: 30 }),
    );
    expect(isHookbusError(error, "HOOKBUS_CALL_TIMEOUT")).toBe(true);
  });

  it("runs do not share gates; endRun and agent_end clear a run's gate", async () => {
    const observed: string[] = [];
    const observer: ObservationSink = {
      publish: (hook, _c, _e, eventId) => {
        observed.push(hook);
        return Promise.resolve({ eventId, seq: observed.length, duplicate: false, stream: "S" });
      },
    };
    const block = {
      outcome: "block",
      blockReason: "stop",
      decidedBy: { block: ["x"] },
      blockedBy: "x",
    };
    const client = HookbusClient.create({
      transport: new ScriptedTransport({ after_llm_call: block, before_tool_call: allow }),
      observer,
    });
    await expect(client.afterLlmCall(ctx, afterEvent)).rejects.toBeInstanceOf(HookbusBlockedError);
    const otherRun = { ...toolCtx("call_1"), runId: "run-2" };
    expect(await client.beforeToolCall(otherRun, toolEvent("call_1"))).toEqual(allow);
    await expect(
      client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1")),
    ).rejects.toMatchObject({
      blockReason: "after_llm_call blocked this turn's tool calls: stop",
      blockedBy: "x",
    });
    client.endRun("run-1");
    expect(await client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"))).toEqual(allow);

    await expect(client.afterLlmCall(ctx, afterEvent)).rejects.toBeInstanceOf(HookbusBlockedError);
    await client.observe("agent_end", ctx, { success: true });
    expect(await client.beforeToolCall(toolCtx("call_1"), toolEvent("call_1"))).toEqual(allow);
    // The gate's refusal is recorded (an after_tool_call filed under block), then agent_end.
    expect(observed).toEqual(["after_tool_call", "agent_end"]);
  });

  it("observe() takes observational hooks only, and close() waits for observations in flight", async () => {
    let release!: () => void;
    const observer: ObservationSink = {
      publish: (_h, _c, _e, eventId) =>
        new Promise((resolve) => {
          release = () => resolve({ eventId, seq: 1, duplicate: false, stream: "S" });
        }),
    };
    const client = HookbusClient.create({ transport: new ScriptedTransport(), observer });
    const wrongKind = await rejection(
      client.observe("before_tool_call" as never, toolCtx() as never, toolEvent() as never),
    );
    expect(isHookbusError(wrongKind, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    const badId = await rejection(client.observe("llm_output", ctx, {}, { eventId: "" }));
    expect(isHookbusError(badId, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    const badEvent = await rejection(client.observe("agent_end", ctx, {} as never));
    expect(isHookbusError(badEvent, "HOOKBUS_INVALID_EVENT")).toBe(true);

    const published = client.observe("llm_output", ctx, { model: "m" }, { eventId: "ev-1" });
    let closed = false;
    const closing = client.close().then(() => (closed = true));
    await tick();
    expect(closed).toBe(false);
    release();
    expect(await published).toMatchObject({ eventId: "ev-1" });
    await closing;
    const after = await rejection(client.beforeAgentReply(ctx, { cleanedBody: "hi" }));
    expect(isHookbusError(after, "HOOKBUS_COORDINATOR_UNAVAILABLE")).toBe(true);
  });

  it("measureFastPath reports µs per call of an offline client, and refuses a client with a policy on the hook", async () => {
    const result = await measureFastPath({ iterations: 2000, warmup: 200 });
    expect(result.iterations).toBe(2000);
    expect(result.usPerCall).toBeGreaterThan(0);
    const client = HookbusClient.create({
      transport: new ScriptedTransport(),
      registry: registryWith("before_tool_call"),
    });
    await expect(measureFastPath({ client, iterations: 1 })).rejects.toMatchObject({
      code: "HOOKBUS_INVALID_ARGUMENT",
    });
  });
});
