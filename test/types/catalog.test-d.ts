/**
 * Compile-time contract of the catalog: the types a policy author and an agent developer see are
 * inferred from the zod schemas, and a handler that returns a field its hook does not allow does
 * not compile. Every `@ts-expect-error` below must be a real error (tsc fails on an unused one).
 */
/* eslint-disable @typescript-eslint/require-await -- async handlers without an await are what
   policy authors write, and their typing is what is under test here. */
import { describe, expectTypeOf, it } from "vitest";
import {
  HOOK_NAMES,
  isHookName,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type Decision,
  type HookContext,
  type HookEvent,
  type HookName,
  type ModifyingHookName,
  type ObservationalHookName,
  type ObservationHandler,
  type Outcome,
  type PolicyHandler,
  type PolicyHandlers,
  type ToolCall,
  type ToolDefinition,
  type Verdict,
} from "../../src/index.js";

describe("hook names", () => {
  it("splits into modifying and observational", () => {
    expectTypeOf<ModifyingHookName>().toEqualTypeOf<
      | "before_agent_reply"
      | "before_llm_call"
      | "after_llm_call"
      | "before_tool_call"
      | "before_tool_result"
      | "before_response_emit"
    >();
    expectTypeOf<ObservationalHookName>().toEqualTypeOf<
      "after_tool_call" | "llm_input" | "llm_output" | "session_start" | "session_end" | "agent_end"
    >();
    expectTypeOf<HookName>().toEqualTypeOf<ModifyingHookName | ObservationalHookName>();
    expectTypeOf(HOOK_NAMES).toEqualTypeOf<HookName[]>();
  });

  it("isHookName narrows", () => {
    const name: unknown = "llm_input";
    if (isHookName(name)) expectTypeOf(name).toEqualTypeOf<HookName>();
  });
});

describe("events", () => {
  it("before_tool_call", () => {
    expectTypeOf<HookEvent<"before_tool_call">["toolName"]>().toEqualTypeOf<string>();
    expectTypeOf<HookEvent<"before_tool_call">["toolCallId"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<HookEvent<"before_tool_call">["params"]>().toEqualTypeOf<
      Record<string, unknown>
    >();
  });

  it("before_tool_result", () => {
    expectTypeOf<HookEvent<"before_tool_result">["isError"]>().toEqualTypeOf<boolean>();
    expectTypeOf<HookEvent<"before_tool_result">["result"]>().toEqualTypeOf<unknown>();
    expectTypeOf<HookEvent<"before_tool_result">["durationMs"]>().toEqualTypeOf<
      number | undefined
    >();
  });

  it("before_llm_call", () => {
    type E = HookEvent<"before_llm_call">;
    // A role message, or a Responses-API item (`{type: "function_call", ...}`) without a role.
    expectTypeOf<E["messages"][number]["role"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<E["messages"][number]["type"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<E["messages"][number]["content"]>().toEqualTypeOf<
      string | Array<{ [k: string]: unknown; type: string }> | null | undefined
    >();
    expectTypeOf<E["systemPrompt"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<E["tools"]>().toEqualTypeOf<ToolDefinition[] | undefined>();
    expectTypeOf<E["iteration"]>().toEqualTypeOf<number | undefined>();
  });

  it("after_llm_call, before_response_emit, before_agent_reply", () => {
    expectTypeOf<HookEvent<"after_llm_call">["toolCalls"]>().toEqualTypeOf<ToolCall[]>();
    expectTypeOf<HookEvent<"before_response_emit">["content"]>().toEqualTypeOf<string>();
    expectTypeOf<HookEvent<"before_response_emit">["allContent"]>().toEqualTypeOf<string[]>();
    expectTypeOf<HookEvent<"before_agent_reply">["cleanedBody"]>().toEqualTypeOf<string>();
  });

  it("observational hooks", () => {
    expectTypeOf<HookEvent<"after_tool_call">["blocked"]>().toEqualTypeOf<boolean | undefined>();
    expectTypeOf<HookEvent<"after_tool_call">["error"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<HookEvent<"agent_end">["success"]>().toEqualTypeOf<boolean>();
    expectTypeOf<HookEvent<"session_end">["messageCount"]>().toEqualTypeOf<number | undefined>();
  });

  it("events are open: unknown fields are readable as unknown", () => {
    expectTypeOf<HookEvent<"before_llm_call">["temperature"]>().toEqualTypeOf<unknown>();
  });

  it("parseEvent returns the hook's event type", () => {
    expectTypeOf(parseEvent("before_tool_call", {})).toEqualTypeOf<HookEvent<"before_tool_call">>();
    expectTypeOf(parseEvent("llm_output", {})).toEqualTypeOf<HookEvent<"llm_output">>();
  });
});

describe("contexts", () => {
  it("run hooks may carry a runId (the session is the run without one), so may session hooks", () => {
    expectTypeOf<HookContext<"before_llm_call">["runId"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<HookContext<"session_start">["runId"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<HookContext<"session_end">["agentId"]>().toEqualTypeOf<string>();
    expectTypeOf<HookContext<"agent_end">["sessionKey"]>().toEqualTypeOf<string>();
    expectTypeOf<HookContext<"agent_end">["channel"]>().toEqualTypeOf<string | undefined>();
  });

  it("tool hooks carry the tool call", () => {
    expectTypeOf<HookContext<"before_tool_call">["toolCallId"]>().toEqualTypeOf<
      string | undefined
    >();
    expectTypeOf<HookContext<"after_tool_call">["toolName"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf(parseContext("before_tool_result", {})).toEqualTypeOf<
      HookContext<"before_tool_result">
    >();
  });
});

describe("verdicts", () => {
  it("before_agent_reply has reply and reason, and no block", () => {
    expectTypeOf<Verdict<"before_agent_reply">>().toHaveProperty("reply");
    expectTypeOf<Verdict<"before_agent_reply">>().toHaveProperty("reason");
    expectTypeOf<Verdict<"before_agent_reply">>().not.toHaveProperty("block");
    expectTypeOf<Verdict<"before_agent_reply">>().not.toHaveProperty("blockReason");
    expectTypeOf<
      NonNullable<Verdict<"before_agent_reply">["reply"]>["text"]
    >().toEqualTypeOf<string>();
  });

  it("each hook's verdict has exactly the fields of the design table", () => {
    expectTypeOf<keyof Verdict<"before_llm_call">>().toEqualTypeOf<
      "messages" | "systemPrompt" | "tools" | "block" | "blockReason"
    >();
    expectTypeOf<keyof Verdict<"after_llm_call">>().toEqualTypeOf<
      "toolCalls" | "block" | "blockReason"
    >();
    expectTypeOf<keyof Verdict<"before_tool_call">>().toEqualTypeOf<
      "params" | "requireApproval" | "block" | "blockReason"
    >();
    expectTypeOf<keyof Verdict<"before_tool_result">>().toEqualTypeOf<
      "content" | "block" | "blockReason"
    >();
    expectTypeOf<keyof Verdict<"before_response_emit">>().toEqualTypeOf<
      "content" | "allContent" | "block" | "blockReason"
    >();
    expectTypeOf<keyof Verdict<"before_agent_reply">>().toEqualTypeOf<"reply" | "reason">();
  });

  it("every verdict field is optional ({} is no opinion)", () => {
    expectTypeOf({}).toExtend<Verdict<"before_llm_call">>();
    expectTypeOf({}).toExtend<Verdict<"before_response_emit">>();
    expectTypeOf<Verdict<"before_tool_call">["block"]>().toEqualTypeOf<boolean | undefined>();
  });

  it("a variable annotated with Verdict rejects foreign fields", () => {
    // @ts-expect-error -- before_tool_call cannot replace content
    const _v1: Verdict<"before_tool_call"> = { block: true, content: "x" };
    // @ts-expect-error -- before_agent_reply cannot block
    const _v2: Verdict<"before_agent_reply"> = { reply: { text: "x" }, block: true };
  });

  it("only modifying hooks have verdicts and decisions", () => {
    // @ts-expect-error -- observational hook
    type _V = Verdict<"after_tool_call">;
    // @ts-expect-error -- observational hook
    type _D = Decision<"llm_input">;
    // @ts-expect-error -- observational hook
    type _H = PolicyHandler<"session_start">;
    // @ts-expect-error -- observational hook
    parseVerdict("after_tool_call", {});
    expectTypeOf(parseVerdict("before_tool_call", {})).toEqualTypeOf<Verdict<"before_tool_call">>();
  });
});

describe("decisions", () => {
  it("carry the outcome, the attribution and the hook's fields", () => {
    expectTypeOf<Decision<"before_tool_call">["outcome"]>().toEqualTypeOf<Outcome>();
    expectTypeOf<Outcome>().toEqualTypeOf<
      "allow" | "modify" | "block" | "reply" | "pending_approval"
    >();
    expectTypeOf<Decision<"before_tool_call">["decidedBy"]>().toEqualTypeOf<
      Record<string, string[]>
    >();
    expectTypeOf<Decision<"before_tool_call">["params"]>().toEqualTypeOf<
      Record<string, unknown> | undefined
    >();
    expectTypeOf<Decision<"after_llm_call">["toolCalls"]>().toEqualTypeOf<ToolCall[] | undefined>();
    expectTypeOf<Decision<"before_agent_reply">>().toHaveProperty("reply");
    expectTypeOf<Decision<"before_response_emit">["blockedBy"]>().toEqualTypeOf<
      string | undefined
    >();
    expectTypeOf(parseDecision("before_llm_call", {})).toEqualTypeOf<Decision<"before_llm_call">>();
  });
});

describe("PolicyHandler", () => {
  it("receives the hook's event and context", () => {
    const handler: PolicyHandler<"before_tool_call"> = (event, context) => {
      expectTypeOf(event).toEqualTypeOf<HookEvent<"before_tool_call">>();
      expectTypeOf(context).toEqualTypeOf<HookContext<"before_tool_call">>();
      return undefined;
    };
    expectTypeOf(handler).parameter(0).toEqualTypeOf<HookEvent<"before_tool_call">>();
  });

  it("legitimate handlers compile: sync, async, several returns, no opinion", () => {
    const _block: PolicyHandler<"before_tool_call"> = () => ({ block: true });
    const _blockAsync: PolicyHandler<"before_tool_call"> = async () => ({
      block: true,
      blockReason: "no",
    });
    const _nothing: PolicyHandler<"before_tool_call"> = () => {};
    const _nothingAsync: PolicyHandler<"before_tool_call"> = async () => {};
    const _undefined: PolicyHandler<"before_tool_call"> = () => undefined;
    const _several: PolicyHandler<"before_tool_call"> = (event) => {
      if (event.toolName === "shell") return { block: true, blockReason: "no shell" };
      if (event.toolName === "fetch") return { params: { ...event.params, timeoutMs: 5000 } };
      if (event.toolName === "noop") return;
      return undefined;
    };
    const _severalAsync: PolicyHandler<"before_response_emit"> = async (event) => {
      await Promise.resolve();
      if (event.content.includes("secret")) return { content: "[redacted]" };
      if (event.allContent.length > 3) return { allContent: event.allContent.slice(0, 3) };
      return {};
    };
    const _narrow: PolicyHandler<"before_llm_call"> = (event) => ({
      tools: event.tools?.filter((t) => toolDefinitionName(t) !== "shell"),
      messages: event.messages.filter((m) => m.role !== "system"),
      systemPrompt: "",
    });
    const _allow: PolicyHandler<"after_llm_call"> = (event) => ({
      toolCalls: event.toolCalls
        .filter((c) => toolCallName(c) !== "shell")
        .map((c) => ({ id: toolCallId(c) })),
    });
    const _reply: PolicyHandler<"before_agent_reply"> = (event) =>
      event.cleanedBody === "/help" ? { reply: { text: "help" }, reason: "wizard" } : undefined;
    const _result: PolicyHandler<"before_tool_result"> = (event) =>
      event.isError ? { content: [{ type: "text", text: "tool failed" }] } : { content: "ok" };
    // A verdict built elsewhere (or parsed from the wire) can be returned as is.
    const fromWire: Verdict<"before_tool_call"> = parseVerdict("before_tool_call", {});
    const _passThrough: PolicyHandler<"before_tool_call"> = () => fromWire;
    const _passThroughAsync: PolicyHandler<"before_tool_call"> = async () =>
      Promise.resolve(fromWire);
  });

  // TypeScript does not check excess properties of object literals returned from functions that
  // are only contextually typed; HandlerVerdict in src/catalog/catalog.ts makes every field of
  // another hook `?: never`, so each of these is an error whatever the shape of the function.
  it("a field another hook allows is a compile error: sync expression body", () => {
    // @ts-expect-error -- before_tool_call cannot replace content
    const _a: PolicyHandler<"before_tool_call"> = () => ({ content: "x" });
    // @ts-expect-error -- the allowed field does not make the foreign one acceptable
    const _b: PolicyHandler<"before_tool_call"> = () => ({ block: true, content: "x" });
    // @ts-expect-error -- before_llm_call filters tools, not tool calls
    const _c: PolicyHandler<"before_llm_call"> = () => ({ toolCalls: [] });
    // @ts-expect-error -- before_agent_reply cannot block
    const _d: PolicyHandler<"before_agent_reply"> = () => ({ reply: { text: "x" }, block: true });
    // @ts-expect-error -- a decision field is not a verdict field
    const _e: PolicyHandler<"after_llm_call"> = () => ({ outcome: "block" });
  });

  it("a field another hook allows is a compile error: block body", () => {
    // @ts-expect-error -- before_tool_call cannot replace content
    const _a: PolicyHandler<"before_tool_call"> = () => {
      return { block: true, content: "x" };
    };
  });

  it("a field another hook allows is a compile error: async", () => {
    // @ts-expect-error -- before_tool_call cannot replace content
    const _a: PolicyHandler<"before_tool_call"> = async () => ({ block: true, content: "x" });
    // @ts-expect-error -- before_tool_call cannot replace content
    const _b: PolicyHandler<"before_tool_call"> = async () => {
      await Promise.resolve();
      return { content: "x" };
    };
    // @ts-expect-error -- before_response_emit has no params
    const _c: PolicyHandler<"before_response_emit"> = async () => ({ params: {} });
  });

  it("a field another hook allows is a compile error: several return statements", () => {
    // @ts-expect-error -- the second return has a field before_tool_call does not allow
    const _sync: PolicyHandler<"before_tool_call"> = (event) => {
      if (event.toolName === "shell") return { block: true };
      return { content: "x" };
    };
    // @ts-expect-error -- the second return has a field before_tool_call does not allow
    const _async: PolicyHandler<"before_tool_call"> = async (event) => {
      if (event.toolName === "shell") return { block: true };
      if (event.toolName === "noop") return undefined;
      return { content: "x" };
    };
    const _ternary: PolicyHandler<"before_tool_result"> = (event) =>
      // @ts-expect-error -- one branch of the conditional has a foreign field
      event.isError ? { block: true } : { params: {} };
  });

  it("a wrong type for an allowed field is a compile error", () => {
    // @ts-expect-error -- block is a boolean
    const _a: PolicyHandler<"before_tool_call"> = () => ({ block: "yes" });
    // @ts-expect-error -- the allowlist holds objects with ids
    const _b: PolicyHandler<"after_llm_call"> = async () => ({ toolCalls: ["call_1"] });
  });

  it("a field no hook has is a compile error when the literal shares no field with the verdict", () => {
    // @ts-expect-error -- misspelled
    const _a: PolicyHandler<"before_tool_call"> = () => ({ blocked: true });
  });
});

describe("PolicyHandlers (the map a policy module exports)", () => {
  it("types each entry by its hook", () => {
    const _handlers: PolicyHandlers = {
      before_tool_call: (event) => (event.toolName === "shell" ? { block: true } : undefined),
      before_llm_call: async (event) => ({ messages: event.messages.slice(-10) }),
      before_agent_reply: () => ({ reply: { text: "hi" } }),
      after_tool_call: (event, context) => {
        expectTypeOf(event.blocked).toEqualTypeOf<boolean | undefined>();
        expectTypeOf(context.runId).toEqualTypeOf<string | undefined>();
      },
      session_start: async (_event, context) => {
        expectTypeOf(context.runId).toEqualTypeOf<string | undefined>();
        await Promise.resolve();
      },
    };
    expectTypeOf<PolicyHandlers["llm_input"]>().toEqualTypeOf<
      ObservationHandler<"llm_input"> | undefined
    >();
  });

  it("rejects foreign fields in every function shape", () => {
    const _a: PolicyHandlers = {
      // @ts-expect-error -- before_llm_call filters tools, not tool calls
      before_llm_call: () => ({ toolCalls: [] }),
    };
    const _b: PolicyHandlers = {
      // @ts-expect-error -- before_tool_call cannot replace content
      before_tool_call: async () => ({ block: true, content: "x" }),
    };
    const _c: PolicyHandlers = {
      // @ts-expect-error -- the second return has a field before_tool_call does not allow
      before_tool_call: async (event) => {
        if (event.toolName === "shell") return { block: true };
        return { content: "x" };
      },
    };
    const _d: PolicyHandlers = {
      // @ts-expect-error -- before_agent_reply cannot block
      before_agent_reply: () => {
        return { reply: { text: "x" }, block: true };
      },
    };
  });

  it("rejects unknown hooks", () => {
    const _a: PolicyHandlers = {
      // @ts-expect-error -- not a hook
      before_tool: () => undefined,
    };
  });
});
