/**
 * One tool execution through hookbus, whatever the framework: the tool gates (offered tools, the
 * after_llm_call gate, before_tool_call), the tool, before_tool_result, and the after_tool_call
 * observation. Frameworks report a thrown error to the model as the tool's error result, so a
 * block is thrown as HookbusBlockedError and the model reads its reason.
 *
 * `runGatedToolCall` does it all around one `execute`. Frameworks whose extension points split a
 * tool call in two (the OpenAI Agents SDK's tool input and output guardrails) use its halves,
 * `decideToolCall` and `decideToolResult`, so both paths ask the same questions.
 *
 * Fail closed: when a gate cannot decide (no coordinator, timeout, no run) the tool never runs.
 */
import type { Decision } from "../../catalog/catalog.js";
import { toolInputFromParams } from "../../catalog/common.js";
import { HookbusBlockedError, isHookbusBlockedError } from "../../agent/blocked.js";
import type { HookbusRun } from "./run.js";

export interface ToolCallRef {
  toolName: string;
  /** The framework's id of the call: the after_llm_call allowlist is by id. */
  toolCallId: string | undefined;
  /** The tool's input as the model produced it (any JSON value). */
  input: unknown;
}

/** What the model sees of a tool's result: the tool's own value, or a policy's replacement. */
export type ToolOutcome<T> = { replaced: false; output: T } | { replaced: true; output: unknown };

/** The block a refused tool call stands for, shaped as a before_tool_call decision. */
function localBlock(reason: string): HookbusBlockedError<"before_tool_call"> {
  const decision: Decision<"before_tool_call"> = {
    outcome: "block",
    blockReason: reason,
    decidedBy: { block: [] },
  };
  return new HookbusBlockedError("before_tool_call", decision);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function idField(call: ToolCallRef): { toolCallId?: string } {
  return call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId };
}

/** Record after_tool_call; an observation never delays or fails the tool (the client tracks it). */
export function observeToolCall(
  run: HookbusRun,
  call: ToolCallRef,
  fields: Record<string, unknown>,
): void {
  run.client
    .observe("after_tool_call", run.toolContext(call.toolName, call.toolCallId), {
      toolName: call.toolName,
      ...idField(call),
      params: call.input,
      ...fields,
    })
    .catch(() => {});
}

/**
 * The gates of one tool call: resolves to the input the tool may run with (the model's, or the
 * params a policy rewrote). Throws HookbusBlockedError on a block and the gate's own error
 * (HOOKBUS_COORDINATOR_UNAVAILABLE, HOOKBUS_CALL_TIMEOUT, ...) when it could not decide; both
 * are observed as a blocked after_tool_call.
 */
export async function decideToolCall(run: HookbusRun, call: ToolCallRef): Promise<unknown> {
  try {
    const offered = run.offeredTools;
    if (offered !== undefined && !offered.has(call.toolName)) {
      throw localBlock(
        `tool ${JSON.stringify(call.toolName)} was not offered to the model in this turn (before_llm_call removed it, or it was never offered)`,
      );
    }
    // The after_llm_call gate is checked inside (it waits for that decision first).
    const decision = await run.client.beforeToolCall(
      run.toolContext(call.toolName, call.toolCallId),
      { toolName: call.toolName, ...idField(call), params: call.input },
    );
    return decision.params === undefined
      ? call.input
      : toolInputFromParams(call.input, decision.params);
  } catch (error) {
    observeToolCall(run, call, {
      blocked: true,
      blockReason: isHookbusBlockedError(error)
        ? (error.blockReason ?? "blocked")
        : `not decided: ${errorText(error)}`,
    });
    throw error;
  }
}

/**
 * before_tool_result for a tool that ran with `input` and returned `output`, then the
 * after_tool_call observation: resolves to what the model may see. Throws HookbusBlockedError
 * when the result is blocked, and the gate's error when it could not decide.
 */
export async function decideToolResult<T>(
  run: HookbusRun,
  call: ToolCallRef,
  input: unknown,
  output: T,
  durationMs: number,
): Promise<ToolOutcome<T>> {
  const result = output === undefined ? {} : { result: output };
  const decided = await run.client.beforeToolResult(
    run.toolContext(call.toolName, call.toolCallId),
    {
      toolName: call.toolName,
      ...idField(call),
      params: input,
      ...result,
      isError: false,
      durationMs,
    },
  );
  observeToolCall(run, call, { params: input, ...result, durationMs });
  return decided.content === undefined
    ? { replaced: false, output }
    : { replaced: true, output: decided.content };
}

/**
 * Run `execute` for one tool call of `run` if hookbus allows it, with the input the policies
 * decided; resolves to what the model may see. Throws HookbusBlockedError on a block and the
 * gate's own error (HOOKBUS_COORDINATOR_UNAVAILABLE, HOOKBUS_CALL_TIMEOUT, ...) when it could
 * not decide; in both cases `execute` never ran.
 */
export async function runGatedToolCall<T>(
  run: HookbusRun,
  call: ToolCallRef,
  execute: (input: unknown) => Promise<T>,
): Promise<ToolOutcome<T>> {
  const input = await decideToolCall(run, call);
  const started = Date.now();
  let output: T;
  try {
    output = await execute(input);
  } catch (error) {
    const durationMs = Date.now() - started;
    // What a failing tool says reaches the model too: before_tool_result gates it.
    const decided = await run.client.beforeToolResult(
      run.toolContext(call.toolName, call.toolCallId),
      {
        toolName: call.toolName,
        ...idField(call),
        params: input,
        result: errorText(error),
        isError: true,
        durationMs,
      },
    );
    observeToolCall(run, call, { params: input, error: errorText(error), durationMs });
    if (decided.content !== undefined) throw new Error(toolContentText(decided.content));
    throw error;
  }
  return decideToolResult(run, call, input, output, Date.now() - started);
}

/** A before_tool_result replacement as text (string, or the text of its parts). */
export function toolContentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content) ?? "";
  return content
    .map((part) =>
      typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
    )
    .join("");
}
