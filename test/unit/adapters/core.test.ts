/**
 * The adapters' run core without NATS: the run context follows each run through async code (two
 * concurrent runs never see each other), a tool call outside a run is refused before anything
 * runs, the run's gate is forgotten when its callback settles, and a plugin module loaded twice
 * shares one client. The transport is the SDK's own in-process interface.
 */
import { describe, expect, it, vi } from "vitest";
import type { Decision, ModifyingHookName } from "../../../src/catalog/catalog.js";
import { HookbusClient } from "../../../src/agent/index.js";
import {
  closeSharedHookbusClient,
  currentHookbusRun,
  decideAgentReply,
  lastUserText,
  MAX_SHARED_CLIENTS,
  requireHookbusRun,
  runGatedToolCall,
  sharedHookbusClient,
  withHookbusRun,
} from "../../../src/adapters/core/index.js";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";
import { rejection } from "../../support/wait.js";
import { staticRegistryView } from "../../../src/agent/registry-view.js";
import { type CallTransport } from "../../../src/agent/transport.js";

/** Answers every call with `decisions[hook]` (allow by default), recording the hooks asked. */
function clientWith(decisions: Partial<Record<ModifyingHookName, Record<string, unknown>>> = {}) {
  const asked: string[] = [];
  const transport: CallTransport = {
    call<H extends ModifyingHookName>(hook: H) {
      asked.push(hook);
      const decision = (decisions[hook] ?? { outcome: "allow", decidedBy: {} }) as Decision<H>;
      return Promise.resolve({ decision, registryRevision: 1, recordSeq: asked.length });
    },
  };
  const registry = staticRegistryView(
    new RegistrySnapshot(1, {
      policies: [
        {
          name: "p",
          hooks: ["before_agent_reply", "after_llm_call", "before_tool_call", "before_tool_result"],
          priority: 1,
          timeoutMs: 1000,
          mode: "enforce",
        },
      ],
    }),
  );
  return { client: HookbusClient.create({ transport, registry }), asked };
}

describe("withHookbusRun", () => {
  it("each concurrent run finds its own context through awaits and timers", async () => {
    const { client } = clientWith();
    const seen = await Promise.all(
      ["s-a", "s-b"].map((sessionKey) =>
        withHookbusRun({ client, agentId: "a", sessionKey, runId: "run-7" }, async () => {
          await new Promise((r) => setTimeout(r, 5));
          await Promise.resolve();
          return requireHookbusRun("test").context.sessionKey;
        }),
      ),
    );
    expect(seen).toEqual(["s-a", "s-b"]);
    expect(currentHookbusRun()).toBeUndefined();
  });

  it("derives a run id per run when none is given", async () => {
    const { client } = clientWith();
    const ids = await Promise.all(
      [1, 2].map(() =>
        withHookbusRun({ client, agentId: "a", sessionKey: "s" }, (run) => run.context.runId),
      ),
    );
    expect(ids[0]).not.toBe(ids[1]);
  });

  it("outside a run, requireHookbusRun refuses with HOOKBUS_NO_RUN", () => {
    expect(() => requireHookbusRun("tool x")).toThrow(
      expect.objectContaining({ code: "HOOKBUS_NO_RUN" }),
    );
  });

  it("forgets the run's after_llm_call gate when the callback settles, even when it throws", async () => {
    const { client } = clientWith({
      after_llm_call: { outcome: "block", blockReason: "no", decidedBy: { block: ["p"] } },
    });
    const ref = { agentId: "a", sessionKey: "s", runId: "r" };
    await rejection(
      withHookbusRun({ client, ...ref }, async (run) => {
        await client.decide("after_llm_call", run.context, { toolCalls: [] });
        throw new Error("the framework failed");
      }),
    );
    // A new run with the same ids starts without the old block.
    const decision = await client.decide(
      "before_tool_call",
      { ...ref, toolName: "t" },
      { toolName: "t", params: {} },
    );
    expect(decision.outcome).toBe("allow");
  });
});

describe("runGatedToolCall", () => {
  it("a tool not offered in this turn never runs and is not asked about", async () => {
    const { client, asked } = clientWith();
    const execute = vi.fn(() => Promise.resolve("ran"));
    const error = await withHookbusRun({ client, agentId: "a", sessionKey: "s" }, (run) => {
      run.offeredTools = new Set(["read"]);
      return rejection(
        runGatedToolCall(run, { toolName: "exec", toolCallId: "c1", input: {} }, execute),
      );
    });
    expect(isHookbusError(error, "HOOKBUS_BLOCKED")).toBe(true);
    expect(execute).not.toHaveBeenCalled();
    expect(asked).toEqual([]);
  });

  it("runs a string-input tool with the policy's rewrite of {input}", async () => {
    const { client } = clientWith({
      before_tool_call: {
        outcome: "modify",
        params: { input: "safe" },
        decidedBy: { params: ["p"] },
      },
    });
    const execute = vi.fn((input: unknown) => Promise.resolve(`ran ${String(input)}`));
    const outcome = await withHookbusRun({ client, agentId: "a", sessionKey: "s" }, (run) =>
      runGatedToolCall(run, { toolName: "sh", toolCallId: "c1", input: "rm -rf /" }, execute),
    );
    expect(execute).toHaveBeenCalledWith("safe");
    expect(outcome).toEqual({ replaced: false, output: "ran safe" });
  });
});

describe("sharedHookbusClient", () => {
  it("a module loaded twice shares one client; a failed connection is retried", async () => {
    const key = `test-${Math.random()}`;
    const { client } = clientWith();
    const first = await import("../../../src/adapters/core/shared-client.js");
    vi.resetModules();
    const second = await import("../../../src/adapters/core/shared-client.js");
    expect(second).not.toBe(first);
    const failing = vi.fn(() => Promise.reject(new Error("down")));
    await rejection(first.sharedHookbusClient(key, failing));
    const connect = vi.fn(() => Promise.resolve(client));
    const again = vi.fn(() => Promise.resolve(clientWith().client));
    expect(await first.sharedHookbusClient(key, connect)).toBe(client);
    expect(await second.sharedHookbusClient(key, again)).toBe(client);
    expect(again).not.toHaveBeenCalled();
    await second.closeSharedHookbusClient(key);
  });

  it(`holds at most ${MAX_SHARED_CLIENTS} clients`, async () => {
    const keys = Array.from({ length: MAX_SHARED_CLIENTS + 1 }, (_, i) => `bound-${i}`);
    const { client } = clientWith();
    const results = await Promise.allSettled(
      keys.map((k) => sharedHookbusClient(k, () => Promise.resolve(client))),
    );
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(
      isHookbusError((refused[0] as PromiseRejectedResult).reason, "HOOKBUS_LIMIT_EXCEEDED"),
    ).toBe(true);
    for (const k of keys) await closeSharedHookbusClient(k);
  });
});

describe("before_agent_reply in the run core", () => {
  it("reads the user's message from any framework's shape; another last message is no user turn", () => {
    expect(
      lastUserText([
        { role: "system", content: "s" },
        { role: "user", content: "hi" },
      ]),
    ).toBe("hi");
    // AI SDK and pi text parts, OpenAI Responses input_text parts; images add no text.
    const parts = [
      { type: "text", text: "look at " },
      { type: "image", data: "..." },
      { type: "input_text", text: "this" },
    ];
    expect(lastUserText([{ role: "user", content: parts }])).toBe("look at this");
    expect(
      lastUserText([
        { role: "user", content: "q" },
        { role: "tool", content: [] },
      ]),
    ).toBe(undefined);
    expect(lastUserText([{ type: "function_call_result" }])).toBe(undefined);
    expect(lastUserText([])).toBe(undefined);
  });

  it("asks once per run, only for a run that starts with the user's message, unless turned off", async () => {
    const reply = {
      outcome: "reply",
      reply: { text: "hello yourself" },
      decidedBy: { reply: ["g"] },
    };
    const { client, asked } = clientWith({ before_agent_reply: reply });
    const ask = (options: { agentReply?: boolean }, texts: (string | undefined)[]) =>
      withHookbusRun({ client, agentId: "a", sessionKey: "s", ...options }, async (run) => {
        const answers: (string | undefined)[] = [];
        for (const text of texts) answers.push(await decideAgentReply(run, text));
        return answers;
      });
    expect(await ask({}, ["hi", "hi again"])).toEqual(["hello yourself", undefined]);
    expect(await ask({}, [undefined, "hi"])).toEqual([undefined, undefined]);
    expect(await ask({ agentReply: false }, ["hi"])).toEqual([undefined]);
    expect(asked).toEqual(["before_agent_reply"]);
  });
});
