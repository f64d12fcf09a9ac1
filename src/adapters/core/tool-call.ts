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
import { askHook, toolFields } from "./decide.js";
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
  return Object.assign(new HookbusBlockedError("before_tool_call", decision), {
    [ADAPTER_REFUSAL]: true as const,
  });
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** How a tool's execution went: its value, or what it threw (the error text reaches the model). */
export type ToolRun<T> = { ok: true; output: T } | { ok: false; error: unknown };

/** What the model may see instead of a tool's own result (a before_tool_result decision). */
export type ToolResultReplacement = string | { type: string; [k: string]: unknown }[];

/** Record after_tool_call for `call` (its input as it ran) with `fields`. */
export function observeToolCall(
  run: HookbusRun,
  call: ToolCallRef,
  fields: Record<string, unknown>,
): void {
  const context = run.toolContext(call.toolName, call.toolCallId);
  // An observation never delays or fails the tool; the client tracks it until close().
  run.client
    .observe("after_tool_call", context, {
      toolName: call.toolName,
      ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
      params: call.input,
      ...fields,
    })
    .catch((failure: unknown) =>
      run.client.log.warn(
        { err: failure, hook: "after_tool_call", toolName: call.toolName },
        "the tool call's after_tool_call observation was lost",
      ),
    );
}

/**
 * Frameworks whose extension points split a tool call in two (pi's before/after hooks, the OpenAI
 * Agents SDK's input and output guardrails) use the halves, `gateToolCall` and
 * `reportToolResult` (or `decideToolResult`), so every adapter asks the same questions.
 *
 * The tool gates for one tool call of `run`: offered tools, the after_llm_call gate (waited for
 * inside the client) and before_tool_call. Resolves to the input the tool may run with (the
 * policies' rewrite, or the model's own); throws HookbusBlockedError on a block and the gate's own
 * error (HOOKBUS_COORDINATOR_UNAVAILABLE, HOOKBUS_CALL_TIMEOUT, ...) when it could not decide. A
 * refused call is observed (after_tool_call, `blocked`) here; the tool must not run.
 */
export async function gateToolCall(run: HookbusRun, call: ToolCallRef): Promise<unknown> {
  return decidedInput(call, await decideToolCall(run, call));
}

/** How a framework's approval step asks: under a callId of its own, without waiting for a person. */
export interface ToolGateOptions {
  callId?: string;
  waitForApproval?: boolean;
}

/**
 * `gateToolCall`'s decision itself: allow or modify, or (asked with `waitForApproval: false`) a
 * pending approval. Blocks and errors are thrown and observed as in `gateToolCall`.
 */
export async function decideToolCall(
  run: HookbusRun,
  call: ToolCallRef,
  options: ToolGateOptions = {},
): Promise<Decision<"before_tool_call">> {
  try {
    const offered = run.offeredTools;
    if (offered !== undefined && !offered.has(call.toolName)) {
      const refusal = localBlock(
        `tool ${JSON.stringify(call.toolName)} was not offered to the model in this turn (before_llm_call removed it, or it was never offered)`,
      );
      run.reportDecision({
        hook: "before_tool_call",
        decision: refusal.decision,
        source: "adapter",
        ...toolFields(call),
      });
      throw refusal;
    }
    return await askHook(
      run,
      "before_tool_call",
      run.toolContext(call.toolName, call.toolCallId),
      {
        toolName: call.toolName,
        ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
        params: call.input,
      },
      { call: options, tool: call },
    );
  } catch (error) {
    const refusal = refusalFields(error);
    if (refusal !== undefined) observeToolCall(run, call, refusal);
    throw error;
  }
}

/** The input a tool runs with under `decision`: the policies' rewrite, or the model's own. */
export function decidedInput(call: ToolCallRef, decision: Decision<"before_tool_call">): unknown {
  return decision.params === undefined
    ? call.input
    : toolInputFromParams(call.input, decision.params);
}

/** A local block: the adapter refused the call itself (no decision record holds it). */
const ADAPTER_REFUSAL = Symbol("hookbus adapter refusal");

/**
 * The after_tool_call fields of a refused call, saying who refused it, so the log files the
 * refusals no decision record holds under `block` (log/observation-outcome.ts). Undefined for the
 * after_llm_call gate's refusals: the agent SDK records those itself.
 */
function refusalFields(error: unknown): Record<string, unknown> | undefined {
  if (!isHookbusBlockedError(error)) {
    // The gate could not decide: the adapter fails closed, and that is its refusal.
    return {
      blocked: true,
      blockReason: `not decided: ${errorText(error)}`,
      blockSource: "adapter",
    };
  }
  if (error.source === "after_llm_call_gate") return undefined;
  const local = (error as { [ADAPTER_REFUSAL]?: true })[ADAPTER_REFUSAL] === true;
  return {
    blocked: true,
    blockReason: error.blockReason ?? "blocked",
    ...(error.blockedBy === undefined ? {} : { blockedBy: error.blockedBy }),
    blockSource: local ? "adapter" : "decision",
  };
}

/**
 * After a tool ran (`call.input` is the input it ran with): before_tool_result on what the model
 * would see, then the after_tool_call observation. Resolves to the policies' replacement, or
 * undefined to keep the tool's own result; throws HookbusBlockedError on a block, and the call's
 * own error when it could not decide (the caller hides the result: fail closed).
 */
export async function reportToolResult<T>(
  run: HookbusRun,
  call: ToolCallRef,
  ran: ToolRun<T>,
  durationMs: number,
): Promise<ToolResultReplacement | undefined> {
  const result = ran.ok ? ran.output : errorText(ran.error);
  const decided = await askHook(
    run,
    "before_tool_result",
    run.toolContext(call.toolName, call.toolCallId),
    {
      toolName: call.toolName,
      ...(call.toolCallId === undefined ? {} : { toolCallId: call.toolCallId }),
      params: call.input,
      ...(result === undefined ? {} : { result }),
      isError: !ran.ok,
      durationMs,
    },
    { tool: call },
  );
  observeToolCall(run, call, {
    ...(ran.ok ? (result === undefined ? {} : { result }) : { error: result }),
    durationMs,
  });
  return decided.content;
}

/**
 * Run `execute` for one tool call of `run` if hookbus allows it, with the input the policies
 * decided (or the framework's approval step decided, for this run); resolves to what the model may see. Throws HookbusBlockedError on a block and the
 * gate's own error when it could not decide; in both cases `execute` never ran.
 */
export async function runGatedToolCall<T>(
  run: HookbusRun,
  call: ToolCallRef,
  execute: (input: unknown) => Promise<T>,
): Promise<ToolOutcome<T>> {
  // The framework's approval step may have decided this call already (src/adapters/core/approval.ts).
  const input = await (run.takeDecided(call.toolCallId) ?? gateToolCall(run, call));
  const started = Date.now();
  let ran: ToolRun<T>;
  try {
    ran = { ok: true, output: await execute(input) };
  } catch (error) {
    ran = { ok: false, error };
  }
  const replacement = await reportToolResult(run, { ...call, input }, ran, Date.now() - started);
  if (!ran.ok) {
    // What a failing tool says reaches the model too: before_tool_result gated it.
    if (replacement !== undefined) throw new Error(toolResultText(replacement));
    throw ran.error;
  }
  return replacement === undefined
    ? { replaced: false, output: ran.output }
    : { replaced: true, output: replacement };
}

/**
 * reportToolResult for a tool that ran with `input` and returned `output`: what the model may
 * see, the tool's own value or a policy's replacement.
 */
export async function decideToolResult<T>(
  run: HookbusRun,
  call: ToolCallRef,
  input: unknown,
  output: T,
  durationMs: number,
): Promise<ToolOutcome<T>> {
  const replacement = await reportToolResult(
    run,
    { ...call, input },
    { ok: true, output },
    durationMs,
  );
  return replacement === undefined
    ? { replaced: false, output }
    : { replaced: true, output: replacement };
}

/** Tool result content as text: a string, or the text of its parts (a framework's or a policy's). */
export function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return JSON.stringify(content) ?? "";
  return content
    .map((part) =>
      typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
    )
    .join("");
}
