/** invokePolicy: the in-process path shared by the NATS runner and replay. */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { HookbusError } from "../../../src/foundation/errors.js";
import {
  createSessionState,
  type SessionStateStore,
} from "../../../src/policy/state/session-state.js";
import { definePolicy } from "../../../src/policy/policy.js";
import { invokePolicy } from "../../../src/policy/invoke.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

const ctx = { agentId: "agent-1", sessionKey: "s-1", runId: "run-1" };
const event = { toolName: "email.send", params: { to: "x@example.com" } };

describe("invokePolicy", () => {
  const calls: unknown[] = [];
  const policy = definePolicy({
    name: "gate",
    version: "3",
    hooks: {
      async before_tool_call(ev, context, tools) {
        calls.push({ ev, context, callId: tools.callId, signal: tools.signal });
        const tainted = await tools.state.get<boolean>("tainted");
        if (ev.toolName === "throw") throw new Error("handler bug");
        if (ev.toolName === "invalid") return { block: "no" } as unknown as { block: boolean };
        if (tainted === true && ev.toolName === "email.send")
          return { block: true, blockReason: "session read untrusted content" };
        return undefined;
      },
      async after_tool_call(ev, _context, tools) {
        if (ev.toolName === "web_fetch") await tools.state.set("tainted", true);
        return undefined;
      },
    },
  });

  it("runs the handler on validated input and returns its verdict, with latency", async () => {
    const state = new MemorySessionStateStore();
    const before = await invokePolicy(policy, "before_tool_call", event, ctx, {
      callId: "c1",
      state,
    });
    expect(before).toEqual({ status: "ok", latencyMs: expect.any(Number) as number });
    expect(before.latencyMs).toBeGreaterThanOrEqual(0);

    const observed = await invokePolicy(
      policy,
      "after_tool_call",
      { toolName: "web_fetch", params: {} },
      ctx,
      { callId: "o1", state },
    );
    expect(observed.status).toBe("ok");
    expect(observed.verdict).toBeUndefined();

    const after = await invokePolicy(policy, "before_tool_call", event, ctx, {
      callId: "c2",
      state,
    });
    expect(after.status).toBe("ok");
    expect(after.verdict).toEqual({ block: true, blockReason: "session read untrusted content" });
    // The state is per session: another session is not tainted.
    const other = await invokePolicy(
      policy,
      "before_tool_call",
      event,
      { ...ctx, sessionKey: "s-2" },
      { callId: "c3", state },
    );
    expect(other.verdict).toBeUndefined();
    expect(calls.at(-1)).toMatchObject({ callId: "c3", context: { sessionKey: "s-2" } });
    expect((calls.at(-1) as { signal: AbortSignal }).signal.aborted).toBe(false);
  });

  it("validates before the handler: an invalid event or context never reaches it", async () => {
    const state = new MemorySessionStateStore();
    const count = calls.length;
    const badEvent = await invokePolicy(policy, "before_tool_call", { params: {} }, ctx, {
      callId: "c",
      state,
    });
    expect(badEvent.status).toBe("error");
    expect(badEvent.error).toMatchObject({
      code: "HOOKBUS_INVALID_EVENT",
      details: { hook: "before_tool_call" },
    });
    const badContext = await invokePolicy(
      policy,
      "before_tool_call",
      event,
      { agentId: "a" },
      { callId: "c", state },
    );
    expect(badContext.error?.code).toBe("HOOKBUS_INVALID_CONTEXT");
    const notObject = await invokePolicy(policy, "before_tool_call", "a string", ctx, {
      callId: "c",
      state,
    });
    expect(notObject.error?.code).toBe("HOOKBUS_INVALID_EVENT");
    expect(calls.length).toBe(count);
  });

  it("turns a throwing handler into HOOKBUS_POLICY_ERROR and a bad verdict into status invalid", async () => {
    const state = new MemorySessionStateStore();
    const thrown = await invokePolicy(
      policy,
      "before_tool_call",
      { ...event, toolName: "throw" },
      ctx,
      { callId: "c", state },
    );
    expect(thrown.status).toBe("error");
    expect(thrown.error).toMatchObject({
      code: "HOOKBUS_POLICY_ERROR",
      message: expect.stringContaining("handler bug") as string,
      details: { policy: "gate", hook: "before_tool_call", cause: { name: "Error" } },
    });
    const invalid = await invokePolicy(
      policy,
      "before_tool_call",
      { ...event, toolName: "invalid" },
      ctx,
      { callId: "c", state },
    );
    expect(invalid.status).toBe("invalid");
    expect(invalid.error?.code).toBe("HOOKBUS_INVALID_VERDICT");
    expect(invalid.verdict).toBeUndefined();
  });

  it("reports a hook without handler and an unknown hook as errors", async () => {
    const state = new MemorySessionStateStore();
    const missing = await invokePolicy(policy, "before_llm_call", { messages: [] }, ctx, {
      callId: "c",
      state,
    });
    expect(missing).toMatchObject({ status: "error", error: { code: "HOOKBUS_POLICY_ERROR" } });
    const unknown = await invokePolicy(policy, "nope" as "before_llm_call", {}, ctx, {
      callId: "c",
      state,
    });
    expect(unknown.error?.code).toBe("HOOKBUS_UNKNOWN_HOOK");
  });

  it("keeps HOOKBUS_STATE_CONFLICT from the state store as the error code", async () => {
    const conflicted: SessionStateStore = {
      ...new MemorySessionStateStore(),
      get: () => Promise.resolve(undefined),
      set: () => Promise.resolve(),
      delete: () => Promise.resolve(),
      update: () =>
        Promise.reject(
          new HookbusError("HOOKBUS_STATE_CONFLICT", "lost every race", { attempts: 12 }),
        ),
    };
    const counting = definePolicy({
      name: "counting",
      hooks: {
        async before_tool_call(_e, _c, { state }) {
          await state.update<number>("n", (n) => (n ?? 0) + 1);
        },
      },
    });
    const result = await invokePolicy(counting, "before_tool_call", event, ctx, {
      callId: "c",
      state: conflicted,
    });
    expect(result).toMatchObject({ status: "error", error: { code: "HOOKBUS_STATE_CONFLICT" } });
  });

  it("hands the caller's signal to the handler", async () => {
    const controller = new AbortController();
    controller.abort();
    let seen: AbortSignal | undefined;
    const p = definePolicy({
      name: "sig",
      hooks: { before_tool_call: (_e, _c, tools) => void (seen = tools.signal) },
    });
    await invokePolicy(p, "before_tool_call", event, ctx, {
      callId: "c",
      state: new MemorySessionStateStore(),
      signal: controller.signal,
    });
    expect(seen?.aborted).toBe(true);
  });

  it("gives the handler a state scoped to the policy and the session", async () => {
    const store = new MemorySessionStateStore();
    const p = definePolicy({
      name: "scoped",
      hooks: {
        async before_tool_call(_e, _c, { state }) {
          await state.update<number>("n", (n) => (n ?? 0) + 1);
        },
      },
    });
    await invokePolicy(p, "before_tool_call", event, ctx, { callId: "1", state: store });
    await invokePolicy(p, "before_tool_call", event, ctx, { callId: "2", state: store });
    expect(await createSessionState(store, "scoped", "s-1").get("n")).toBe(2);
    expect(await createSessionState(store, "gate", "s-1").get("n")).toBeUndefined();
  });
});

describe("tools.facts absent (issue 35: only with `facts: true` in the registry)", () => {
  it("is undefined, and its first read per policy logs a warning naming `facts: true`", async () => {
    const lines: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    const seen: unknown[] = [];
    const reader = definePolicy({
      name: "reads-facts",
      hooks: {
        before_tool_call: (_e, _c, tools) => {
          seen.push(tools.facts);
        },
        after_tool_call: (_e, _c, tools) => {
          seen.push(tools.facts); // observations never carry facts: nothing to warn about
        },
      },
    });
    const state = new MemorySessionStateStore();
    await invokePolicy(reader, "after_tool_call", event, ctx, { callId: "o", state, logger });
    expect(lines).toEqual([]);
    for (const callId of ["a", "b"])
      await invokePolicy(reader, "before_tool_call", event, ctx, { callId, state, logger });
    expect(seen).toEqual([undefined, undefined, undefined]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("`facts: true`");
  });
});
