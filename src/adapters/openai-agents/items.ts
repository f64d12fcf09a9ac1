/**
 * The OpenAI Agents SDK's model request and response (Responses-API items) as hookbus events,
 * and hookbus decisions applied back to them. Pure: no I/O.
 */
import type { AgentOutputItem, ModelRequest, ModelSettingsToolChoice } from "@openai/agents";
import type { MessageInput } from "../../catalog/input.js";
import type { LlmCallDecision } from "../core/llm-call.js";
import type { ToolCallRef } from "../core/tool-call.js";
import { parseToolArguments } from "../core/llm-call.js";

type FunctionCall = Extract<AgentOutputItem, { type: "function_call" }>;
type AssistantMessage = Extract<AgentOutputItem, { role: "assistant" }>;
type RequestInput = ModelRequest["input"];

/** A tool or handoff as before_llm_call offers it. */
export interface OfferedTool {
  type: string;
  name: string;
  description?: string;
}

/** The conversation of a request: a plain string input is the user's message. */
export function requestMessages(input: RequestInput): readonly MessageInput[] {
  return typeof input === "string" ? [{ role: "user", content: input }] : input;
}

/**
 * What the model is offered: its tools and its handoffs (a handoff is a tool call to the model),
 * each by the name the model calls it.
 */
export function offeredTools(request: ModelRequest): OfferedTool[] {
  return [
    ...request.tools.map((tool) => ({
      type: tool.type,
      name: tool.name,
      ...("description" in tool && typeof tool.description === "string"
        ? { description: tool.description }
        : {}),
    })),
    ...request.handoffs.map((handoff) => ({
      type: "handoff",
      name: handoff.toolName,
      description: handoff.toolDescription,
    })),
  ];
}

/** The request a before_llm_call decision asks for (conversation, instructions, tools). */
export function decidedRequest(request: ModelRequest, decided: LlmCallDecision): ModelRequest {
  const { decision, offers } = decided;
  const next: ModelRequest = {
    ...request,
    tools: request.tools.filter((tool) => offers(tool.name)),
    handoffs: request.handoffs.filter((handoff) => offers(handoff.toolName)),
  };
  if (decision.messages !== undefined) {
    // The policy's messages as it wrote them (chat messages or Responses-API items).
    next.input = decision.messages as unknown as RequestInput;
  }
  if (decision.systemPrompt !== undefined) {
    if (decision.systemPrompt === "") delete next.systemInstructions;
    else next.systemInstructions = decision.systemPrompt;
  }
  const choice = narrowedChoice(request.modelSettings.toolChoice, next);
  if (choice !== request.modelSettings.toolChoice) {
    next.modelSettings = { ...request.modelSettings, toolChoice: choice };
  }
  return next;
}

/** A tool choice that names a removed tool, or requires one when none is left, becomes "none". */
function narrowedChoice(
  choice: ModelSettingsToolChoice | undefined,
  request: ModelRequest,
): ModelSettingsToolChoice | undefined {
  if (choice === undefined || choice === "auto" || choice === "none") return choice;
  const names = [...request.tools.map((t) => t.name), ...request.handoffs.map((h) => h.toolName)];
  if (choice === "required") return names.length === 0 ? "none" : choice;
  return names.includes(choice) ? choice : "none";
}

/** The model's function calls (tools and handoffs the SDK runs in this process). */
export function functionCalls(output: readonly AgentOutputItem[]): FunctionCall[] {
  return output.filter((item): item is FunctionCall => item.type === "function_call");
}

/** A function call as the tool gates see it (arguments parsed when they are JSON). */
export function toolCallRef(call: {
  callId: string;
  name: string;
  arguments: string;
}): ToolCallRef {
  return {
    toolName: call.name,
    toolCallId: call.callId,
    input: parseToolArguments(call.arguments),
  };
}

/** A function call as the after_llm_call event carries it. */
export function eventToolCall(call: FunctionCall) {
  return { id: call.callId, name: call.name, arguments: parseToolArguments(call.arguments) };
}

function isAssistantMessage(item: AgentOutputItem): item is AssistantMessage {
  return item.type === "message" && "role" in item && item.role === "assistant";
}

/** The text of the response's assistant messages. */
export function outputText(output: readonly AgentOutputItem[]): string {
  let text = "";
  for (const item of output) {
    if (!isAssistantMessage(item)) continue;
    for (const part of item.content) if (part.type === "output_text") text += part.text;
  }
  return text;
}

/**
 * The response with its text replaced by `text`: the first text part carries it, the other text
 * parts are removed (nothing of the model's own text is left).
 */
export function withOutputText(
  output: readonly AgentOutputItem[],
  text: string,
): AgentOutputItem[] {
  let placed = false;
  return output.map((item) => {
    if (!isAssistantMessage(item)) return item;
    const content = item.content.flatMap((part): (typeof part)[] => {
      if (part.type !== "output_text") return [part];
      if (placed) return [];
      placed = true;
      return [{ ...part, text }];
    });
    return { ...item, content };
  });
}

/** The after_llm_call event fields of a response. */
export function afterLlmCallFields(output: readonly AgentOutputItem[]) {
  const text = outputText(output);
  return {
    toolCalls: functionCalls(output).map(eventToolCall),
    ...(text === "" ? {} : { response: text }),
  };
}
