/**
 * Issue 13: a framework's own message, item and tool types are accepted as events without casts
 * (interfaces have no implicit index signature), and non-object tool input is accepted.
 */
import type { ModelMessage, ToolCallPart } from "ai";
import { describe, expectTypeOf, it } from "vitest";
import type {
  DecisionOf,
  HookbusClient,
  HookContext,
  HookEvent,
  HookEventInput,
} from "../../src/index.js";

// Shaped like the OpenAI SDK's interfaces (interfaces, not type literals: the trap).
interface ChatMessage {
  role: "user" | "assistant";
  content: string | null;
  name?: string;
}
interface ResponseFunctionCall {
  type: "function_call";
  call_id: string;
  name: string;
  arguments: string;
}
interface FunctionTool {
  type: "function";
  function: { name: string; parameters: Record<string, unknown> };
}
interface FrameworkToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

declare const client: HookbusClient;
declare const ctx: HookContext<"before_llm_call">;
declare const messages: ChatMessage[];
declare const items: ResponseFunctionCall[];
declare const tools: FunctionTool[];
declare const calls: FrameworkToolCall[];

describe("events accept what frameworks produce", () => {
  it("framework interfaces are assignable to the event input without casts", () => {
    expectTypeOf(
      client.beforeLlmCall(ctx, { messages: [...messages, ...items], tools }),
    ).toEqualTypeOf<ReturnType<HookbusClient["beforeLlmCall"]>>();
    void client.afterLlmCall(ctx, { toolCalls: calls });
  });

  it("the Vercel AI SDK's own message and tool-call types need no cast", () => {
    const aiMessages: ModelMessage[] = [{ role: "user", content: "hi" }];
    const part: ToolCallPart = { type: "tool-call", toolCallId: "c1", toolName: "t", input: {} };
    void client.beforeLlmCall(ctx, { messages: aiMessages });
    void client.afterLlmCall(ctx, {
      toolCalls: [{ id: part.toolCallId, name: part.toolName, arguments: part.input }],
    });
  });

  it("non-object tool input is accepted; policies still see an object", () => {
    void client.beforeToolCall(ctx, { toolName: "search", params: "free text" });
    void client.beforeToolCall(ctx, { toolName: "sum", params: [1, 2] });
    expectTypeOf<HookEvent<"before_tool_call">["params"]>().toEqualTypeOf<
      Record<string, unknown>
    >();
    expectTypeOf<HookEventInput<"before_tool_call">["params"]>().toEqualTypeOf<unknown>();
  });

  it("a context without a run id is accepted", () => {
    void client.beforeLlmCall({ agentId: "a", sessionKey: "s" }, { messages: [] });
  });

  it("a decision's tools and tool calls are the caller's own types", () => {
    expectTypeOf<DecisionOf<"before_llm_call", FunctionTool>["tools"]>().toEqualTypeOf<
      FunctionTool[] | undefined
    >();
    expectTypeOf<
      DecisionOf<"after_llm_call", never, FrameworkToolCall>["toolCalls"]
    >().toEqualTypeOf<FrameworkToolCall[] | undefined>();
  });

  it("an object without any field the schema reads is still a compile error", () => {
    // @ts-expect-error a message must share role, type or content
    void client.beforeLlmCall(ctx, { messages: [{ text: "hi" }] });
  });
});
