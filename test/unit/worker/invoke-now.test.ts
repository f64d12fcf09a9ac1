/**
 * invokePolicyNow: replay's path to a policy's answer without a promise when the handler answers
 * synchronously, and the same answers as invokePolicy in every case (verdict, no opinion, a
 * handler that throws or rejects, an invalid verdict, a handler that returns a promise).
 */
import { describe, expect, it } from "vitest";
import { definePolicy } from "../../../src/policy/policy.js";
import { invokePolicy, invokePolicyNow } from "../../../src/policy/invoke.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

const context = { agentId: "a", sessionKey: "s", toolName: "exec", toolCallId: "t1" };
const eventOf = (toolName: string) => ({ toolName, toolCallId: "t1", params: {} });

const policy = definePolicy({
  name: "p",
  version: "1",
  hooks: {
    before_tool_call(event, _context, tools) {
      switch (event.toolName) {
        case "exec":
          return { block: true, blockReason: "no" };
        case "throw":
          throw new Error("handler bug");
        case "invalid":
          return { block: "no" } as unknown as { block: boolean };
        case "later":
          return tools.state
            .update<number>("n", (n) => (n ?? 0) + 1)
            .then((n) => ({ block: true, blockReason: `later ${n}` }));
        case "reject":
          return Promise.reject(new Error("async bug"));
        default:
          return undefined;
      }
    },
  },
});

const options = () => ({ callId: "c1", state: new MemorySessionStateStore() });
const withoutLatency = ({ latencyMs, ...rest }: { latencyMs: number }) => {
  expect(latencyMs).toBeGreaterThanOrEqual(0);
  return rest;
};

describe("invokePolicyNow", () => {
  it.each(["exec", "read", "throw", "invalid"])(
    "a synchronous handler (%s): the answer at once, the same as invokePolicy's",
    async (toolName) => {
      const now = invokePolicyNow(
        policy,
        "before_tool_call",
        eventOf(toolName),
        context,
        options(),
      );
      expect(now).not.toBeInstanceOf(Promise);
      const awaited = await invokePolicy(
        policy,
        "before_tool_call",
        eventOf(toolName),
        context,
        options(),
      );
      expect(withoutLatency(now as { latencyMs: number })).toEqual(withoutLatency(awaited));
    },
  );

  it.each(["later", "reject"])(
    "a handler that returns a promise (%s): a promise of the same answer as invokePolicy's",
    async (toolName) => {
      const now = invokePolicyNow(
        policy,
        "before_tool_call",
        eventOf(toolName),
        context,
        options(),
      );
      expect(now).toBeInstanceOf(Promise);
      const awaited = await invokePolicy(
        policy,
        "before_tool_call",
        eventOf(toolName),
        context,
        options(),
      );
      expect(withoutLatency(await now)).toEqual(withoutLatency(awaited));
      expect(awaited.status).toBe(toolName === "later" ? "ok" : "error");
    },
  );
});
