/**
 * Events are built from what real LLM APIs send and return. The catalog must accept those shapes
 * as they are and hand every field back unchanged: a policy layer that dropped a cache hint, a
 * reasoning block or a provider's metadata would corrupt the conversation it forwards.
 */
import { describe, expect, it } from "vitest";
import {
  parseContext,
  parseEvent,
  parseVerdict,
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type ToolCall,
  type ToolDefinition,
} from "../../../src/index.js";

// --- OpenAI Chat Completions ------------------------------------------------------------------

const openAiMessages = [
  { role: "system", content: "You are a helpful assistant." },
  {
    role: "user",
    name: "alice",
    content: [
      { type: "text", text: "What is in this image, and what is the weather in Paris?" },
      {
        type: "image_url",
        image_url: { url: "https://example.com/cat.png", detail: "high" },
      },
    ],
  },
  {
    role: "assistant",
    content: null,
    refusal: null,
    tool_calls: [
      {
        id: "call_abc123",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      },
    ],
  },
  { role: "tool", tool_call_id: "call_abc123", content: '{"tempC":15}' },
  { role: "assistant", content: "It is 15°C in Paris." },
];

const openAiTools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather for a city",
      parameters: {
        type: "object",
        properties: { city: { type: "string" } },
        required: ["city"],
        additionalProperties: false,
      },
      strict: true,
    },
  },
];

const openAiToolCall = {
  id: "call_abc123",
  type: "function",
  function: { name: "get_weather", arguments: '{"city":"Paris"}' },
};

// --- Anthropic Messages -----------------------------------------------------------------------

const anthropicMessages = [
  {
    role: "user",
    content: [
      {
        type: "text",
        text: "A long document ...",
        cache_control: { type: "ephemeral" },
      },
      {
        type: "image",
        source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
      },
      { type: "text", text: "Summarise it and check the weather in Paris." },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "The user wants ...", signature: "EqQBCgIYAhIM..." },
      { type: "text", text: "Let me check." },
      {
        type: "tool_use",
        id: "toolu_01A09q90qw90lq917835lq9",
        name: "get_weather",
        input: { city: "Paris" },
      },
    ],
  },
  {
    role: "user",
    content: [
      {
        type: "tool_result",
        tool_use_id: "toolu_01A09q90qw90lq917835lq9",
        content: [{ type: "text", text: "15°C, cloudy" }],
        is_error: false,
        cache_control: { type: "ephemeral", ttl: "1h" },
      },
    ],
  },
];

const anthropicTools = [
  {
    name: "get_weather",
    description: "Current weather for a city",
    input_schema: {
      type: "object",
      properties: { city: { type: "string" } },
      required: ["city"],
    },
    cache_control: { type: "ephemeral" },
  },
  // A server tool: flat, with a name, and fields of its own.
  { type: "web_search_20250305", name: "web_search", max_uses: 5 },
];

const anthropicToolCall = {
  type: "tool_use",
  id: "toolu_01A09q90qw90lq917835lq9",
  name: "get_weather",
  input: { city: "Paris" },
};

// --- Gemini-like ------------------------------------------------------------------------------

const geminiMessages = [
  { role: "user", parts: [{ text: "What is the weather in Paris?" }] },
  {
    role: "model",
    parts: [{ functionCall: { name: "get_weather", args: { city: "Paris" } } }],
  },
  {
    role: "user",
    parts: [{ functionResponse: { name: "get_weather", response: { tempC: 15 } } }],
  },
];

const geminiToolCall = { name: "get_weather", args: { city: "Paris" } };

const runContext = { agentId: "agent-1", sessionKey: "slack:C01:T42", runId: "run-7" };

describe("before_llm_call accepts real API payloads and keeps every field", () => {
  it("OpenAI chat messages: string content, content parts with image_url, null content with tool_calls, tool role", () => {
    const event = {
      messages: openAiMessages,
      tools: openAiTools,
      model: "gpt-4o",
      provider: "openai",
      iteration: 1,
      temperature: 0.2,
      response_format: { type: "json_object" },
    };
    const parsed = parseEvent("before_llm_call", event);
    expect(parsed).toStrictEqual(event);
    // Spot-check the fields a lossy schema would have dropped.
    expect(parsed.messages[1]).toHaveProperty("content.1.image_url.detail", "high");
    expect(parsed.messages[2]).toHaveProperty("content", null);
    expect(parsed.messages[2]).toHaveProperty(
      "tool_calls.0.function.arguments",
      '{"city":"Paris"}',
    );
    expect(parsed.messages[3]).toHaveProperty("tool_call_id", "call_abc123");
    expect(parsed.tools?.[0]).toHaveProperty("function.parameters.required", ["city"]);
    expect(parsed.tools?.[0]).toHaveProperty("function.strict", true);
    expect(parsed).toHaveProperty("response_format", { type: "json_object" });
  });

  it("Anthropic messages: text/image/thinking/tool_use/tool_result blocks with cache_control", () => {
    const event = {
      messages: anthropicMessages,
      systemPrompt: "You are terse.",
      tools: anthropicTools,
      model: "claude-sonnet-4-5",
      provider: "anthropic",
      iteration: 0,
      max_tokens: 1024,
    };
    const parsed = parseEvent("before_llm_call", event);
    expect(parsed).toStrictEqual(event);
    expect(parsed.messages[0]).toHaveProperty("content.0.cache_control", { type: "ephemeral" });
    expect(parsed.messages[0]).toHaveProperty("content.1.source.media_type", "image/png");
    expect(parsed.messages[1]).toHaveProperty("content.0.signature", "EqQBCgIYAhIM...");
    expect(parsed.messages[1]).toHaveProperty("content.2.input", { city: "Paris" });
    expect(parsed.messages[2]).toHaveProperty("content.0.cache_control.ttl", "1h");
    expect(parsed.tools?.[0]).toHaveProperty("input_schema.required", ["city"]);
    expect(parsed.tools?.[1]).toHaveProperty("max_uses", 5);
  });

  it("Gemini-like messages: `parts` instead of `content`", () => {
    const event = { messages: geminiMessages, model: "gemini-2.5-pro", provider: "google" };
    const parsed = parseEvent("before_llm_call", event);
    expect(parsed).toStrictEqual(event);
    expect(parsed.messages[1]).toHaveProperty("parts.0.functionCall.args", { city: "Paris" });
  });

  it("an empty conversation and no tools", () => {
    expect(parseEvent("before_llm_call", { messages: [] })).toStrictEqual({ messages: [] });
  });
});

describe("tool definitions", () => {
  const shapes: Array<[string, ToolDefinition, string]> = [
    [
      "OpenAI chat {type:'function', function:{...}}",
      openAiTools[0] as ToolDefinition,
      "get_weather",
    ],
    [
      "Anthropic flat {name, description, input_schema}",
      anthropicTools[0] as ToolDefinition,
      "get_weather",
    ],
    ["Anthropic server tool", anthropicTools[1] as ToolDefinition, "web_search"],
    [
      "OpenAI Responses flat {type:'function', name, parameters}",
      { type: "function", name: "lookup", description: "d", parameters: { type: "object" } },
      "lookup",
    ],
    ["minimal flat {name}", { name: "noop" }, "noop"],
  ];

  it.each(shapes)("%s is accepted, kept, and named", (_label, def, name) => {
    const parsed = parseEvent("before_llm_call", { messages: [], tools: [def] });
    expect(parsed.tools).toStrictEqual([def]);
    expect(toolDefinitionName(parsed.tools![0]!)).toBe(name);
    expect(toolDefinitionName(def)).toBe(name);
  });

  it("verdict tools accept both shapes too (an allowlist echoes what the event carried)", () => {
    const verdict = { tools: [openAiTools[0], anthropicTools[0]] };
    expect(parseVerdict("before_llm_call", verdict)).toStrictEqual(verdict);
  });
});

describe("tool calls with and without ids", () => {
  const calls: Array<[string, ToolCall, string | undefined, string]> = [
    [
      "OpenAI nested function/arguments string",
      openAiToolCall as ToolCall,
      "call_abc123",
      "get_weather",
    ],
    [
      "Anthropic flat tool_use with input",
      anthropicToolCall,
      "toolu_01A09q90qw90lq917835lq9",
      "get_weather",
    ],
    ["Gemini-like {name, args} without id", geminiToolCall, undefined, "get_weather"],
    [
      "flat with object arguments",
      { id: "c1", name: "search", arguments: { q: "x" } },
      "c1",
      "search",
    ],
    ["flat with an empty id", { id: "", name: "search", arguments: "{}" }, undefined, "search"],
    [
      "OpenAI nested with an empty id",
      { id: "", type: "function", function: { name: "get_weather", arguments: "{}" } },
      undefined,
      "get_weather",
    ],
    [
      "OpenAI nested without id",
      { type: "function", function: { name: "get_weather" } },
      undefined,
      "get_weather",
    ],
  ];

  it.each(calls)(
    "%s: accepted by after_llm_call, kept, id and name read",
    (_label, call, id, name) => {
      const event = {
        toolCalls: [call],
        response: { role: "assistant", content: null, tool_calls: [call] },
        model: "m",
        iteration: 2,
      };
      const parsed = parseEvent("after_llm_call", event);
      expect(parsed).toStrictEqual(event);
      const parsedCall = parsed.toolCalls[0]!;
      expect(toolCallId(parsedCall)).toBe(id);
      expect(toolCallName(parsedCall)).toBe(name);
      expect(toolCallName(call)).toBe(name);
    },
  );

  it("keeps Anthropic `input` and Gemini `args` as they are (no renaming to `arguments`)", () => {
    const parsed = parseEvent("after_llm_call", { toolCalls: [anthropicToolCall, geminiToolCall] });
    expect(parsed.toolCalls[0]).toStrictEqual(anthropicToolCall);
    expect(parsed.toolCalls[0]).not.toHaveProperty("arguments");
    expect(parsed.toolCalls[1]).toStrictEqual(geminiToolCall);
  });

  it("response may be plain text or a whole assistant message", () => {
    expect(parseEvent("after_llm_call", { toolCalls: [], response: "done" })).toStrictEqual({
      toolCalls: [],
      response: "done",
    });
    const anthropicResponse = {
      role: "assistant",
      content: [anthropicToolCall],
      stop_reason: "tool_use",
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const parsed = parseEvent("after_llm_call", {
      toolCalls: [anthropicToolCall],
      response: anthropicResponse,
    });
    expect(parsed.response).toStrictEqual(anthropicResponse);
  });

  it("toolCallId treats a missing, empty or non-string id as none", () => {
    expect(toolCallId({})).toBeUndefined();
    expect(toolCallId({ id: "" })).toBeUndefined();
    expect(toolCallId({ id: undefined })).toBeUndefined();
    expect(toolCallId({ id: "x" })).toBe("x");
    expect(toolCallId({ id: 7 } as unknown as { id?: string })).toBeUndefined();
  });

  it("an after_llm_call allowlist verdict keeps extra fields of its entries", () => {
    const verdict = { toolCalls: [{ id: "call_abc123", name: "get_weather" }, {}] };
    expect(parseVerdict("after_llm_call", verdict)).toStrictEqual(verdict);
  });
});

describe("other hooks keep unknown fields too", () => {
  it("before_tool_call with provider-specific fields and nested params", () => {
    const event = {
      toolName: "shell",
      toolCallId: "toolu_01",
      params: { command: "ls", env: { A: "1" }, nested: [{ deep: true }] },
      sandbox: "docker",
    };
    expect(parseEvent("before_tool_call", event)).toStrictEqual(event);
  });

  it("before_tool_call without a tool call id (APIs that give none)", () => {
    const event = { toolName: "get_weather", params: { city: "Paris" } };
    expect(parseEvent("before_tool_call", event)).toStrictEqual(event);
  });

  it("before_tool_result with an MCP-style result and an error result", () => {
    const event = {
      toolName: "fetch",
      toolCallId: "call_1",
      params: { url: "https://example.com" },
      result: {
        content: [
          { type: "text", text: "<html>..." },
          { type: "image", data: "AAAA", mimeType: "image/png" },
        ],
        details: { status: 200 },
      },
      isError: false,
      durationMs: 12.5,
      attempt: 2,
    };
    expect(parseEvent("before_tool_result", event)).toStrictEqual(event);
    const failed = { toolName: "fetch", params: {}, result: null, isError: true };
    expect(parseEvent("before_tool_result", failed)).toStrictEqual(failed);
  });

  it("before_tool_result verdict content may be text or Anthropic-style content parts", () => {
    expect(parseVerdict("before_tool_result", { content: "[redacted]" })).toStrictEqual({
      content: "[redacted]",
    });
    const parts = { content: [{ type: "text", text: "ok", cache_control: { type: "ephemeral" } }] };
    expect(parseVerdict("before_tool_result", parts)).toStrictEqual(parts);
  });

  it("before_response_emit, before_agent_reply and the observational hooks", () => {
    const samples = [
      [
        "before_response_emit",
        { content: "hi", allContent: ["a", "hi"], channel: "slack", messageCount: 4, thread: "t1" },
      ],
      ["before_agent_reply", { cleanedBody: "/approve 42", sender: { id: "u1" } }],
      [
        "after_tool_call",
        { toolName: "shell", params: {}, blocked: true, blockReason: "no", policy: "p" },
      ],
      ["llm_input", { messages: anthropicMessages, prompt: "hi", imagesCount: 1, extra: 1 }],
      [
        "llm_output",
        {
          assistantTexts: ["a"],
          lastAssistant: { role: "assistant", content: "a" },
          usage: { input: 1, output: 2, reasoning: 3 },
          stopReason: "end_turn",
        },
      ],
      ["session_start", { sessionId: "s", resumedFrom: "s0", source: "cli" }],
      ["session_end", { sessionId: "s", messageCount: 3, durationMs: 10, reason: "idle" }],
      ["agent_end", { messages: openAiMessages, success: true, durationMs: 1, tokens: 9 }],
    ] as const;
    for (const [hook, event] of samples) {
      expect(parseEvent(hook, event), hook).toStrictEqual(event);
    }
  });

  it("contexts keep fields the agent adds (e.g. a tenant) and tool contexts carry the call", () => {
    const context = {
      ...runContext,
      channel: "slack",
      traceId: "00-abc-01",
      toolName: "shell",
      toolCallId: "call_1",
      tenant: "acme",
    };
    expect(parseContext("before_tool_call", context)).toStrictEqual(context);
    const agentIdWithDots = { ...runContext, agentId: "team.a*b> c", sessionKey: "x y" };
    expect(parseContext("before_llm_call", agentIdWithDots)).toStrictEqual(agentIdWithDots);
  });
});
