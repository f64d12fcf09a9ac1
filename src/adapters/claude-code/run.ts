/** One Claude Code hook invocation: plan the hookbus call, make it, answer in Claude Code's terms. */
import type { HookbusClient } from "../../agent/client.js";
import { beforeDeadline } from "../../foundation/deadline.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import { eventNameOf, parseHookInput, type ClaudeCodeHookInput } from "./input.js";
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

/** `deadline`, when given, bounds each hookbus call (a long-lived client's default would not). */
export async function handleClaudeCodeHook(
  client: HookbusClient,
  input: ClaudeCodeHookInput,
  options: MappingOptions,
  deadline?: number,
): Promise<ClaudeCodeHookOutput> {
  const texts = input.hook_event_name === "Stop" ? await stopTexts(input) : [];
  const plan = planFor(input, options, texts);
  const call = deadline === undefined ? {} : { timeoutMs: Math.max(1, deadline - Date.now()) };
  switch (plan.kind) {
    case "observe":
      await client.observe(plan.hook, plan.context, plan.event, call);
      return {};
    case "decide":
      break;
  }
  switch (plan.hook) {
    case "before_tool_call":
      return answerToolCall(
        input as Extract<ClaudeCodeHookInput, { hook_event_name: "PreToolUse" }>,
        await client.decide(plan.hook, plan.context, plan.event, call),
        options,
      );
    case "before_tool_result":
      return answerToolResult(await client.decide(plan.hook, plan.context, plan.event, call));
    case "before_agent_reply":
      return answerPrompt(await client.decide(plan.hook, plan.context, plan.event, call));
    case "before_response_emit":
      return answerStop(
        input as Extract<ClaudeCodeHookInput, { hook_event_name: "Stop" }>,
        await client.decide(plan.hook, plan.context, plan.event, call),
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

/**
 * What the hook process prints and its exit status. Exit 0 with JSON on stdout is an answer
 * Claude Code acts on; exit 2 is its blocking error (stderr shown, the action refused). Exit 1
 * would be a non-blocking error (the action goes on), so it is never used: that would fail open.
 */
export interface HookReply {
  exitCode: 0 | 2;
  stdout: string;
  stderr: string;
}

/** A payload hookbus cannot read at all: the blocking error, with the code on stderr. */
export function blockingReply(error: HookbusError): HookReply {
  return { exitCode: 2, stdout: "", stderr: `${error.code}: ${error.message}\n` };
}

function answered(answer: ClaudeCodeHookOutput): HookReply {
  return { exitCode: 0, stdout: `${JSON.stringify(answer)}\n`, stderr: "" };
}

/** The event a payload names, when its text is JSON at all: a failure still answers in its terms. */
function eventNameOfText(text: string) {
  try {
    return eventNameOf(JSON.parse(text));
  } catch {
    return undefined; // not JSON: no event to answer in the terms of; the caller exits 2
  }
}

/**
 * One hook event from stdin's text to the reply, by `deadline`: parse, get a client (a fresh
 * connection for `hookbus claude-code-hook`, the daemon's long-lived one for the fast client),
 * decide, answer. Never throws: every failure is answered closed.
 */
export async function replyToHook(
  text: string,
  options: MappingOptions,
  deadline: number,
  clientFor: (deadline: number) => Promise<HookbusClient>,
): Promise<HookReply> {
  let input: ClaudeCodeHookInput;
  try {
    input = parseHookInput(text);
  } catch (error) {
    const name = eventNameOfText(text);
    const coded = asHookbusError(error);
    return name === undefined
      ? blockingReply(coded)
      : answered(answerFailure(name, undefined, coded));
  }
  const toolName = typeof input.tool_name === "string" ? input.tool_name : undefined;
  try {
    const client = await clientFor(deadline);
    const answer = await beforeDeadline(
      handleClaudeCodeHook(client, input, options, deadline),
      deadline,
      "HOOKBUS_CALL_TIMEOUT",
      () => "the decision did not arrive before the hook's deadline",
    );
    return answered(answer);
  } catch (error) {
    return answered(answerFailure(input.hook_event_name, toolName, asHookbusError(error)));
  }
}
