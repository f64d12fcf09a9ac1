/**
 * The two LLM hooks of a run, as every adapter asks them: before_llm_call (which also decides the
 * tools the model is offered, remembered by the run so a call to any other tool is refused when
 * executed) and after_llm_call (which opens the run's gate before any tool call can start).
 */
import type { Decision } from "../../catalog/catalog.js";
import { toolDefinitionName } from "../../catalog/common.js";
import type {
  HookEventInput,
  MessageInput,
  ToolCallInput,
  ToolDefinitionInput,
} from "../../catalog/input.js";
import { askHook } from "./decide.js";
import type { HookbusRun } from "./run.js";

/** before_llm_call's event without `iteration` (the run counts its LLM calls). */
export interface LlmCallEvent {
  messages: readonly MessageInput[];
  systemPrompt?: string;
  tools?: readonly ToolDefinitionInput[];
  model?: string;
  provider?: string;
}

/** after_llm_call's event without `iteration`. */
export interface AfterLlmCallEvent {
  toolCalls: readonly ToolCallInput[];
  response?: string;
  model?: string;
  provider?: string;
}

export interface LlmCallDecision {
  decision: Decision<"before_llm_call">;
  /** Whether the model may be offered the tool of this name (by the decision's allowlist). */
  offers: (name: string) => boolean;
}

/**
 * Ask before_llm_call for the run's next LLM call, offering `toolNames`. The run's offered tools
 * become the allowed ones; while the call is undecided (and after it failed) nothing is offered.
 * Throws HookbusBlockedError on a block.
 */
export async function decideLlmCall(
  run: HookbusRun,
  event: LlmCallEvent,
  toolNames: readonly string[],
): Promise<LlmCallDecision> {
  const iteration = run.llmCalls++;
  run.offeredTools = new Set();
  const decision = await askHook(run, "before_llm_call", run.context, { ...event, iteration });
  const allowed =
    decision.tools === undefined ? undefined : new Set(decision.tools.map(toolDefinitionName));
  const offers = (name: string) => allowed === undefined || allowed.has(name);
  run.offeredTools = new Set(toolNames.filter(offers));
  return { decision, offers };
}

/** A tool call's arguments as events carry them: parsed when they are JSON, else the text. */
export function parseToolArguments(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Kept as the model's text: policies see what the tool would get.
    return text;
  }
}

/**
 * Ask after_llm_call for the model's answer. The client opens the run's gate synchronously,
 * before this returns: tool calls started later wait for the decision. A failed call is not
 * thrown when there are tool calls: the gate holds the failure and refuses this turn's tool
 * calls (fail closed); without tool calls it is thrown.
 */
export function decideAfterLlmCall(
  run: HookbusRun,
  event: HookEventInput<"after_llm_call">,
): Promise<Decision<"after_llm_call"> | undefined> {
  const asked = askHook(run, "after_llm_call", run.context, event, { throwOnBlock: false });
  return asked.catch((error: unknown) => {
    if (event.toolCalls.length === 0) throw error;
    return undefined;
  });
}

/** decideAfterLlmCall for the run's latest LLM call (the run knows its iteration). */
export function askAfterLlmCall(
  run: HookbusRun,
  event: AfterLlmCallEvent,
): Promise<Decision<"after_llm_call"> | undefined> {
  return decideAfterLlmCall(run, {
    ...event,
    toolCalls: [...event.toolCalls],
    iteration: Math.max(0, run.llmCalls - 1),
  });
}
