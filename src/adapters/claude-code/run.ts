/** One Claude Code hook invocation: plan the hookbus call, make it, answer in Claude Code's terms. */
import type { HookbusClient } from "../../agent/client.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import type { ClaudeCodeHookInput } from "./input.js";
import {
  answerFailure,
  answerPrompt,
  answerStop,
  answerToolCall,
  answerToolResult,
  planFor,
  type ClaudeCodeHookOutput,
  type MappingOptions,
} from "./mapping.js";
import { readTurnTexts } from "./transcript.js";

export type { ClaudeCodeHookOutput, MappingOptions } from "./mapping.js";

/** The turn's texts for Stop: Claude Code's own field when present, else the transcript's tail. */
async function stopTexts(
  input: Extract<ClaudeCodeHookInput, { hook_event_name: "Stop" }>,
): Promise<string[]> {
  if (input.last_assistant_message !== undefined) return [input.last_assistant_message];
  if (input.transcript_path === undefined) return [];
  try {
    return await readTurnTexts(input.transcript_path);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_INVALID_EVENT",
      `cannot read the transcript ${input.transcript_path} for the Stop hook: ${(error as Error).message}`,
    );
  }
}

export async function handleClaudeCodeHook(
  client: HookbusClient,
  input: ClaudeCodeHookInput,
  options: MappingOptions,
): Promise<ClaudeCodeHookOutput> {
  const texts = input.hook_event_name === "Stop" ? await stopTexts(input) : [];
  const plan = planFor(input, options, texts);
  switch (plan.kind) {
    case "observe":
      await client.observe(plan.hook, plan.context, plan.event);
      return {};
    case "decide":
      break;
  }
  switch (plan.hook) {
    case "before_tool_call":
      return answerToolCall(
        input as Extract<ClaudeCodeHookInput, { hook_event_name: "PreToolUse" }>,
        await client.decide(plan.hook, plan.context, plan.event),
        options,
      );
    case "before_tool_result":
      return answerToolResult(await client.decide(plan.hook, plan.context, plan.event));
    case "before_agent_reply":
      return answerPrompt(await client.decide(plan.hook, plan.context, plan.event));
    case "before_response_emit":
      return answerStop(
        input as Extract<ClaudeCodeHookInput, { hook_event_name: "Stop" }>,
        await client.decide(plan.hook, plan.context, plan.event),
      );
  }
}

/** Any failure as a coded error, so the answer can name its code. */
export function asHookbusError(error: unknown): HookbusError {
  if (isHookbusError(error)) return error;
  return new HookbusError(
    "HOOKBUS_COORDINATOR_UNAVAILABLE",
    error instanceof Error ? error.message : String(error),
  );
}

export { answerFailure };
