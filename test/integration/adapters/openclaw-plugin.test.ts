/**
 * The OpenClaw plugin's handlers on real NATS with a coordinator and policy workers, called as
 * OpenClaw calls them (events and contexts shaped as OpenClaw 2026.9 passes them; see
 * test/openclaw/ for the plugin inside the real OpenClaw CLI). This covers what
 * `openclaw agent --local` cannot reach: the outbound `message_sending` hook (a channel
 * delivery), two sessions reusing a run id, and the plugin registered twice in one process.
 */
import { afterEach, describe, expect, it } from "vitest";
import { definePolicy, type Policy } from "../../../src/index.js";
import {
  closeOpenClawClient,
  registerHookbus,
  type OpenClawPluginApi,
} from "../../../src/adapters/openclaw/index.js";
import { until } from "../../support/wait.js";
import { useNatsServer, type Pipeline } from "../pipeline/harness.js";
import { blockSecrets, decisionsOf, policyPipeline, redactEmail } from "./policies.js";

const nats = useNatsServer();

/** OpenClaw's side of `register(api)`: the handlers the plugin registered, by hook. */
function recordingApi(pluginConfig: Record<string, unknown>) {
  const handlers = new Map<string, ((event: unknown, ctx: unknown) => unknown)[]>();
  const middleware: ((event: unknown, ctx: unknown) => unknown)[] = [];
  const logged: string[] = [];
  const api = {
    pluginConfig,
    logger: { info: (m: string) => logged.push(m), warn: (m: string) => logged.push(m) },
    on(hook: string, handler: (event: unknown, ctx: unknown) => unknown) {
      handlers.set(hook, [...(handlers.get(hook) ?? []), handler]);
    },
    registerAgentToolResultMiddleware(handler: (event: unknown, ctx: unknown) => unknown) {
      middleware.push(handler);
    },
  } as unknown as OpenClawPluginApi;
  const fire = (hook: string, event: unknown, ctx: unknown, which = 0) =>
    Promise.resolve(handlers.get(hook)![which]!(event, ctx));
  return { api, fire, middleware, logged };
}

/** Blocks exec in session A only: a decision that must not leak into session B. */
const noExecInA = definePolicy({
  name: "no-exec-in-a",
  hooks: {
    before_tool_call: (event, context) =>
      event.toolName === "exec" && context.sessionKey === "agent:main:a"
        ? { block: true, blockReason: "not in session a" }
        : undefined,
  },
});

function pipeline(policies: Policy[]): Promise<Pipeline> {
  return policyPipeline(nats.url(), policies);
}

const configs: Record<string, unknown>[] = [];
afterEach(async () => {
  for (const config of configs.splice(0)) await closeOpenClawClient(config);
});

function plugin(p: Pipeline) {
  const config = {
    server: nats.url(),
    namespace: p.namespace,
    agentId: "oc-agent",
    timeoutMs: 5000,
  };
  configs.push(config);
  return recordingApi(config);
}

describe("the OpenClaw plugin's message_sending (a channel delivery) is before_response_emit", () => {
  it("the delivered text is the redacted one; a blocked reply is cancelled", async () => {
    const p = await pipeline([redactEmail, blockSecrets]);
    const { api, fire } = plugin(p);
    registerHookbus(api);
    const ctx = { channelId: "telegram", sessionKey: "agent:main:main", runId: "run-1" };
    expect(
      await fire("message_sending", { to: "u1", content: "mail alice@example.com" }, ctx),
    ).toEqual({
      content: "mail [email]",
    });
    expect(await fire("message_sending", { to: "u1", content: "the SECRET is 42" }, ctx)).toEqual({
      cancel: true,
      cancelReason: "the answer carries a secret",
    });
    expect(
      await fire("message_sending", { to: "u1", content: "nothing to see" }, ctx),
    ).toBeUndefined();
    const emits = await decisionsOf(p, "before_response_emit");
    expect(emits).toHaveLength(3);
    expect(emits[0]!.context).toMatchObject({
      agentId: "oc-agent",
      sessionKey: "agent:main:main",
      channel: "telegram",
    });
  });

  it("with the coordinator down the reply is not delivered (fail closed)", async () => {
    const p = await pipeline([redactEmail]);
    await p.coordinator.stop();
    const { api, fire } = plugin(p);
    registerHookbus(api);
    const answer = (await fire(
      "message_sending",
      { to: "u1", content: "hello" },
      { channelId: "telegram", sessionKey: "agent:main:main" },
    )) as { cancel?: boolean; cancelReason?: string };
    expect(answer.cancel).toBe(true);
    expect(answer.cancelReason).toMatch(
      /^hookbus could not decide \(HOOKBUS_COORDINATOR_UNAVAILABLE\).*fail closed/,
    );
  });
});

describe("the OpenClaw plugin's tool gate", () => {
  it("two sessions reusing a run id stay isolated: a block in one is not a block in the other", async () => {
    const p = await pipeline([noExecInA]);
    const { api, fire } = plugin(p);
    registerHookbus(api);
    const call = (session: string, id: string) =>
      fire(
        "before_tool_call",
        { toolName: "exec", params: { command: "ls" }, runId: "run-7", toolCallId: id },
        {
          toolName: "exec",
          agentId: "main",
          sessionKey: `agent:main:${session}`,
          runId: "run-7",
          toolCallId: id,
        },
      );
    expect(await call("a", "c1")).toEqual({ block: true, blockReason: "not in session a" });
    expect(await call("b", "c2")).toBeUndefined();
    expect(await call("a", "c3")).toEqual({ block: true, blockReason: "not in session a" });
    const records = await decisionsOf(p, "before_tool_call");
    expect(records.map((r) => [r.context.sessionKey, r.context.runId, r.decision.outcome])).toEqual(
      [
        ["agent:main:a", "run-7", "block"],
        ["agent:main:b", "run-7", "allow"],
        ["agent:main:a", "run-7", "block"],
      ],
    );
  });

  it("registered twice (OpenClaw loads the module again), both registrations share one client", async () => {
    const p = await pipeline([noExecInA]);
    const first = plugin(p);
    const second = plugin(p);
    registerHookbus(first.api);
    registerHookbus(second.api);
    const event = { toolName: "exec", params: { command: "ls" }, toolCallId: "c1" };
    const ctx = { toolName: "exec", sessionKey: "agent:main:a", runId: "r1", toolCallId: "c1" };
    expect(await first.fire("before_tool_call", event, ctx)).toMatchObject({ block: true });
    expect(
      await second.fire(
        "before_tool_call",
        { ...event, toolCallId: "c2" },
        { ...ctx, toolCallId: "c2" },
      ),
    ).toMatchObject({ block: true });
    // The plugin logs each connection it makes: one, by whichever registration came first.
    const connected = [...first.logged, ...second.logged].filter((m) =>
      m.includes("connected to NATS"),
    );
    expect(connected).toHaveLength(1);
  });
});

describe("the OpenClaw plugin's session hooks", () => {
  it("records session_start and session_end under OpenClaw's session key", async () => {
    const p = await pipeline([noExecInA]);
    const { api, fire } = plugin(p);
    registerHookbus(api);
    const ctx = { agentId: "main", sessionKey: "agent:main:s1", sessionId: "sid-1" };
    await fire("session_start", { sessionId: "sid-1", resumedFrom: "sid-0" }, ctx);
    await fire(
      "session_end",
      { sessionId: "sid-1", messageCount: 4, durationMs: 1200, reason: "idle" },
      ctx,
    );
    // Observations are sent fire and forget: wait until the coordinator stored both.
    const observed = await until(
      async () => {
        const found = (await p.readLog())
          .map((s) => s.record)
          .filter((r) => r.kind === "observation");
        return found.length >= 2 ? found : undefined;
      },
      20_000,
      "session_start and session_end observations",
    );
    const of = (hook: string) => observed.find((r) => r.hook === hook);
    expect(of("session_start")).toMatchObject({
      context: { agentId: "oc-agent", sessionKey: "agent:main:s1", openclawAgentId: "main" },
      event: { sessionId: "sid-1", resumedFrom: "sid-0" },
    });
    expect(of("session_end")).toMatchObject({
      context: { sessionKey: "agent:main:s1" },
      event: { sessionId: "sid-1", messageCount: 4, durationMs: 1200, reason: "idle" },
    });
  });
});
