/**
 * One tool execution through hookbus, whatever the framework: the tool gates (offered tools, the
 * after_llm_call gate, before_tool_call), the tool, before_tool_result, and the after_tool_call
 * observation. Frameworks report a thrown error to the model as the tool's error result, so a
 * block is thrown as HookbusBlockedError and the model reads its reason.
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
  const { client } = run;
  const context = run.toolContext(call.toolName, call.toolCallId);
  const idField = call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId };
  const observe = (fields: Record<string, unknown>) => {
    // An observation never delays or fails the tool; the client tracks it until close().
    client
      .observe("after_tool_call", context, {
        toolName: call.toolName,
        ...idField,
        params: call.input,
        ...fields,
      })
      .catch(() => {});
  };

  let input = call.input;
  try {
    const offered = run.offeredTools;
    if (offered !== undefined && !offered.has(call.toolName)) {
      throw localBlock(
        `tool ${JSON.stringify(call.toolName)} was not offered to the model in this turn (before_llm_call removed it, or it was never offered)`,
      );
    }
    // The after_llm_call gate is checked inside (it waits for that decision first).
    const decision = await client.beforeToolCall(context, {
      toolName: call.toolName,
      ...idField,
      params: call.input,
    });
    if (decision.params !== undefined) input = toolInputFromParams(call.input, decision.params);
  } catch (error) {
    observe({
      blocked: true,
      blockReason: isHookbusBlockedError(error)
        ? (error.blockReason ?? "blocked")
        : `not decided: ${errorText(error)}`,
    });
    throw error;
  }

  const started = Date.now();
  let output: T;
  try {
    output = await execute(input);
  } catch (error) {
    const durationMs = Date.now() - started;
    // What a failing tool says reaches the model too: before_tool_result gates it.
    const decided = await client.beforeToolResult(context, {
      toolName: call.toolName,
      ...idField,
      params: input,
      result: errorText(error),
      isError: true,
      durationMs,
    });
    observe({ params: input, error: errorText(error), durationMs });
    if (decided.content !== undefined) throw new Error(contentText(decided.content));
    throw error;
  }
  const durationMs = Date.now() - started;
  const decided = await client.beforeToolResult(context, {
    toolName: call.toolName,
    ...idField,
    params: input,
    ...(output === undefined ? {} : { result: output }),
    isError: false,
    durationMs,
  });
  observe({ params: input, ...(output === undefined ? {} : { result: output }), durationMs });
  return decided.content === undefined
    ? { replaced: false, output }
    : { replaced: true, output: decided.content };
}

/** A before_tool_result replacement as text (string, or the text of its parts). */
function contentText(content: string | { type: string; [k: string]: unknown }[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}
