/**
 * The `llm_input` and `llm_output` observations of a run's LLM calls, as every adapter sends
 * them: llm_input with what is sent to the model (after before_llm_call decided), llm_output
 * with what the model answered (before after_llm_call and before_response_emit change anything).
 * Fire and forget: an observation never delays or fails the call (HookbusRun.observe).
 */
import type { MessageInput, ToolCallInput } from "../../catalog/input.js";
import type { HookbusRun } from "./run.js";

/** Token counts of one LLM call, as the catalog's `usage` has them. */
export interface LlmUsage {
  input?: number | undefined;
  output?: number | undefined;
  cacheRead?: number | undefined;
  cacheWrite?: number | undefined;
  total?: number | undefined;
}

export interface LlmInputFields {
  messages: readonly MessageInput[];
  systemPrompt?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
}

export interface LlmOutputFields {
  /** The answer's text ("" when it has none). */
  text: string;
  toolCalls: readonly ToolCallInput[];
  usage?: LlmUsage | undefined;
  model?: string | undefined;
  provider?: string | undefined;
}

/** llm_input for the run's latest LLM call (the one before_llm_call was just asked for). */
export function observeLlmInput(run: HookbusRun, fields: LlmInputFields): void {
  if (!run.asks.llmObservations) return;
  run.observe(
    "llm_input",
    {
      ...defined({ model: fields.model, provider: fields.provider }),
      ...defined({ systemPrompt: fields.systemPrompt }),
      messages: fields.messages,
      iteration: latestIteration(run),
    },
    "llm_input was not recorded; the LLM call goes on",
  );
}

/** llm_output for the run's latest LLM call, as the model answered it. */
export function observeLlmOutput(run: HookbusRun, fields: LlmOutputFields): void {
  if (!run.asks.llmObservations) return;
  const usage = fields.usage === undefined ? undefined : defined({ ...fields.usage });
  run.observe(
    "llm_output",
    {
      ...defined({ model: fields.model, provider: fields.provider }),
      assistantTexts: fields.text === "" ? [] : [fields.text],
      toolCalls: [...fields.toolCalls],
      ...(usage === undefined || Object.keys(usage).length === 0 ? {} : { usage }),
      iteration: latestIteration(run),
    },
    "llm_output was not recorded; the LLM call goes on",
  );
}

function latestIteration(run: HookbusRun): number {
  return Math.max(0, run.llmCalls - 1);
}

/** `fields` without its undefined entries (events carry no `undefined`). */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}
