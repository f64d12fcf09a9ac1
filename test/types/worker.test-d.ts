/**
 * definePolicy's types: events and contexts typed per hook, and a verdict field the hook does
 * not allow is a compile error, also for object literals returned from handlers (where plain
 * TypeScript runs no excess-property check).
 */
import { describe, expectTypeOf, it } from "vitest";
import type { HookContext, HookEvent, Verdict } from "../../src/catalog/catalog.js";
import { definePolicy, type Policy, type PolicyTools } from "../../src/policy/policy.js";
import { invokePolicy } from "../../src/policy/invoke.js";
import { MemorySessionStateStore } from "../../src/policy/state/memory-store.js";
import { type SessionState } from "../../src/policy/state/session-state.js";

describe("definePolicy types", () => {
  it("types event, context and tools per hook", () => {
    const policy = definePolicy({
      name: "typed",
      hooks: {
        before_tool_call(event, ctx, tools) {
          expectTypeOf(event).toEqualTypeOf<HookEvent<"before_tool_call">>();
          expectTypeOf(event.toolName).toEqualTypeOf<string>();
          expectTypeOf(ctx).toEqualTypeOf<HookContext<"before_tool_call">>();
          expectTypeOf(ctx.runId).toEqualTypeOf<string | undefined>();
          expectTypeOf(tools).toEqualTypeOf<PolicyTools>();
          expectTypeOf(tools.state).toEqualTypeOf<SessionState>();
          expectTypeOf(tools.signal).toEqualTypeOf<AbortSignal>();
          return { block: true, blockReason: "typed" };
        },
        before_llm_call(event) {
          expectTypeOf(event.messages).toBeArray();
          return { tools: [], systemPrompt: "" };
        },
        after_tool_call(event, ctx) {
          expectTypeOf(event.blocked).toEqualTypeOf<boolean | undefined>();
          expectTypeOf(ctx.sessionKey).toEqualTypeOf<string>();
        },
        session_start(_event, ctx) {
          // Session hooks may fire outside a run.
          expectTypeOf(ctx.runId).toEqualTypeOf<string | undefined>();
        },
      },
    });
    expectTypeOf(policy).toEqualTypeOf<Policy>();
  });

  it("accepts every legal handler shape", () => {
    definePolicy({
      name: "shapes",
      hooks: {
        before_tool_call(event) {
          if (event.toolName === "a") return { block: true };
          if (event.toolName === "b") return { params: { x: 1 } };
          return undefined;
        },
        async before_tool_result(event) {
          await Promise.resolve();
          return event.isError === true ? { content: "redacted" } : undefined;
        },
        before_response_emit: (event) => ({ content: event.content, allContent: [] }),
        after_llm_call: async () => {},
        before_agent_reply: () => ({ reply: { text: "hi" }, reason: "wizard" }),
        llm_output: async () => {},
      },
    });
    const verdict: Verdict<"before_tool_call"> = { block: true };
    definePolicy({ name: "declared", hooks: { before_tool_call: () => verdict } });
  });

  it("rejects a field the hook's verdict does not have, from literals, unions and promises", () => {
    definePolicy({
      name: "bad",
      hooks: {
        // @ts-expect-error content is a before_tool_result/before_response_emit field
        before_tool_call() {
          return { block: true, content: "x" };
        },
      },
    });
    definePolicy({
      name: "typo",
      hooks: {
        // @ts-expect-error "blok" is not a field of any verdict
        before_tool_call: () => ({ block: true, blok: true }),
      },
    });
    definePolicy({
      name: "typo-only",
      hooks: {
        // @ts-expect-error a literal that shares no field with the verdict
        before_tool_call: () => ({ blok: true }),
      },
    });
    definePolicy({
      name: "async-typo",
      hooks: {
        // @ts-expect-error excess field behind a promise
        async before_response_emit() {
          await Promise.resolve();
          return { content: "x", blockReson: "y" };
        },
      },
    });
    definePolicy({
      name: "union-typo",
      hooks: {
        // @ts-expect-error one branch of a union returns an excess field
        before_llm_call(event) {
          if (event.model === "x") return { block: true };
          return { systemPrompt: "p", params: {} };
        },
      },
    });
    definePolicy({
      name: "decision-field",
      hooks: {
        // @ts-expect-error outcome belongs to decisions, not verdicts
        before_tool_call: () => ({ outcome: "block", block: true }),
      },
    });
  });

  it("rejects wrong field types, verdicts from observational hooks and unknown hooks", () => {
    definePolicy({
      name: "wrong-type",
      // @ts-expect-error block is a boolean
      hooks: { before_tool_call: () => ({ block: "yes" }) },
    });
    definePolicy({
      name: "observer-verdict",
      // @ts-expect-error observational handlers return nothing
      hooks: { after_tool_call: () => ({ block: true }) },
    });
    definePolicy({
      name: "unknown-hook",
      // @ts-expect-error not a hook of the catalog
      hooks: { before_tool_cal: () => undefined },
    });
    // @ts-expect-error name is required
    definePolicy({ hooks: { llm_input() {} } });
  });

  it("types invokePolicy's verdict per hook", async () => {
    const policy = definePolicy({
      name: "inv",
      hooks: { before_tool_call: () => ({ block: true }) },
    });
    const result = await invokePolicy(
      policy,
      "before_tool_call",
      {},
      {},
      { callId: "c", state: new MemorySessionStateStore() },
    );
    expectTypeOf(result.verdict).toEqualTypeOf<Verdict<"before_tool_call"> | undefined>();
    expectTypeOf(result.status).toEqualTypeOf<"ok" | "error" | "invalid">();
  });
});
