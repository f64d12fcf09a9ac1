/**
 * The OpenAI Agents SDK tool side: `hookbusTool` gives a function tool a hookbus input guardrail
 * (before_tool_call), an output guardrail (before_tool_result, then the after_tool_call
 * observation) and an `invoke` that runs the tool with the params the policies decided.
 *
 * Why all three: the SDK's tool guardrails are where it expects a tool call to be allowed or
 * rejected (their results are in the run result, and a rejection reaches the model as the tool's
 * output, so the model reads why), but a guardrail cannot change the arguments. The input
 * guardrail leaves its decision with the run, keyed by the call id; the wrapped `invoke` takes
 * it and runs the tool with the decided params. An `invoke` that finds no decision (the
 * guardrail was removed, or the SDK invoked the tool another way) asks the gates itself: no path
 * runs a tool unchecked.
 *
 * A block or a gate that could not decide (coordinator down, timeout) is reported to the model
 * as the tool's output, `HookbusError: before_tool_call blocked: <reason>`; the tool never runs
 * and the run goes on. Outside a hookbus run the guardrails throw HOOKBUS_NO_RUN and the run
 * fails: a tool call that cannot say which run it belongs to cannot be checked against its gate.
 */
import type {
  FunctionTool,
  RunContext,
  Tool,
  ToolGuardrailFunctionOutput,
  ToolInputGuardrailDefinition,
  ToolOutputGuardrailDefinition,
} from "@openai/agents";
import {
  gateToolCall,
  decideToolResult,
  observeToolCall,
  toolResultText,
} from "../core/tool-call.js";
import { toolCallRef } from "./items.js";
import { requireHookbusRun, type HookbusRun } from "../core/run.js";
import { isHookbusError } from "../../foundation/errors.js";
import { answerToolApproval, askToolApproval } from "../core/approval.js";
import { limitExceeded } from "../../foundation/limits.js";

/** Tool calls of one run decided but not yet finished (a turn's parallel calls, not a history). */
export const MAX_PENDING_TOOL_CALLS = 1024;

export const INPUT_GUARDRAIL_NAME = "hookbus before_tool_call";
export const OUTPUT_GUARDRAIL_NAME = "hookbus before_tool_result";

/** A tool call between its input guardrail and its output guardrail. */
interface PendingCall {
  /** The input the policies decided (the model's own when nothing was rewritten). */
  input: unknown;
  /** A policy rewrote the params: the tool gets `input`, not the model's arguments. */
  rewritten: boolean;
  /** Set by `invoke` when the tool has run. */
  durationMs?: number;
}

const pendingByRun = new WeakMap<HookbusRun, Map<string, PendingCall>>();

function pendingOf(run: HookbusRun): Map<string, PendingCall> {
  let pending = pendingByRun.get(run);
  if (pending === undefined) {
    pending = new Map();
    pendingByRun.set(run, pending);
  }
  return pending;
}

function remember(run: HookbusRun, callId: string, call: PendingCall): void {
  const pending = pendingOf(run);
  if (!pending.has(callId) && pending.size >= MAX_PENDING_TOOL_CALLS) {
    throw limitExceeded(
      "pendingToolCalls",
      `run ${run.context.runId} has ${MAX_PENDING_TOOL_CALLS} tool calls decided and not finished`,
      { max: MAX_PENDING_TOOL_CALLS },
    );
  }
  pending.set(callId, call);
}

interface FunctionCallLike {
  callId: string;
  name: string;
  arguments: string;
}

/** What the model reads instead of a refused call's output. */
function refusal(error: unknown): string {
  return String(error);
}

const allow: ToolGuardrailFunctionOutput = { behavior: { type: "allow" } };

function reject(message: string): ToolGuardrailFunctionOutput {
  return { behavior: { type: "rejectContent", message } };
}

const inputGuardrail: ToolInputGuardrailDefinition<unknown> = {
  type: "tool_input",
  name: INPUT_GUARDRAIL_NAME,
  run: async ({ toolCall, context }) => {
    const run = requireHookbusRun(`the input guardrail of tool ${JSON.stringify(toolCall.name)}`);
    try {
      remember(run, toolCall.callId, await decideCall(run, toolCall, context));
      return allow;
    } catch (error) {
      // A block, or a gate that could not decide: the tool must not run (fail closed).
      return reject(refusal(error));
    }
  },
};

const outputGuardrail: ToolOutputGuardrailDefinition<unknown> = {
  type: "tool_output",
  name: OUTPUT_GUARDRAIL_NAME,
  run: async ({ toolCall, output }) => {
    const run = requireHookbusRun(`the output guardrail of tool ${JSON.stringify(toolCall.name)}`);
    const pending = pendingOf(run);
    const call = pending.get(toolCall.callId);
    pending.delete(toolCall.callId);
    if (call === undefined) {
      // The tool ran without hookbus's invoke (not wrapped by hookbusTool): its result is withheld.
      return reject(
        `HookbusError: the result of tool ${JSON.stringify(toolCall.name)} is withheld: the call was not checked by hookbus (wrap the tool with hookbusTool)`,
      );
    }
    try {
      const outcome = await decideToolResult(
        run,
        toolCallRef(toolCall),
        call.input,
        output,
        call.durationMs ?? 0,
      );
      return outcome.replaced ? reject(toolResultText(outcome.output)) : allow;
    } catch (error) {
      return reject(refusal(error));
    }
  },
};

type AnyFunctionTool = FunctionTool<any, any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type ToolCallDetails = Parameters<FunctionTool["invoke"]>[2];

/** What the SDK's run context tells of a call's approval (RunContext.isToolApproved). */
interface ApprovalsView {
  isToolApproved(approval: { toolName: string; callId: string }): boolean | undefined;
}

/** What the `from` of an answer says when the run's approver does not say otherwise. */
export const OPENAI_AGENTS_FROM = "openai-agents";

/**
 * The tool gates' decision on one call (throws on a refusal, as gateToolCall does): the one the
 * approval step made in this run; for a call the app approved in the SDK (a resumed run), the
 * settlement of its hookbus request after sending the approval; else the gates, asked now.
 */
async function decideCall(
  run: HookbusRun,
  call: FunctionCallLike,
  context?: ApprovalsView,
): Promise<PendingCall> {
  const ref = toolCallRef(call);
  const decided = run.takeDecided(call.callId);
  const input = await (decided ?? approvedInput(run, call, context) ?? gateToolCall(run, ref));
  // The gates hand back the model's own input when no policy rewrote it.
  return { input, rewritten: input !== ref.input };
}

/** The input of a call the app approved in the SDK, per the coordinator; undefined if it was not. */
function approvedInput(
  run: HookbusRun,
  call: FunctionCallLike,
  context: ApprovalsView | undefined,
): Promise<unknown> | undefined {
  if (run.approvals === undefined || context === undefined) return undefined;
  if (context.isToolApproved({ toolName: call.name, callId: call.callId }) !== true)
    return undefined;
  const ref = toolCallRef(call);
  return answerToolApproval(run, ref, { approved: true }, OPENAI_AGENTS_FROM).catch(
    (error: unknown) => {
      // Approved by the app's own approval policy, not held by hookbus: the gates decide.
      if (isHookbusError(error, "HOOKBUS_APPROVAL_NOT_FOUND")) return gateToolCall(run, ref);
      throw error;
    },
  );
}

type NeedsApproval = AnyFunctionTool["needsApproval"];

/**
 * The tool's `needsApproval` with hookbus's: in a run with an approver, before_tool_call is asked
 * here (without waiting for a person), and a held call interrupts the run for the app to answer
 * (`result.interruptions`, `state.approve()`/`reject()`). The tool's own policy still applies.
 */
function withHookbusApproval(tool: AnyFunctionTool): NeedsApproval {
  const own = tool.needsApproval;
  return async (runContext, input, callId) => {
    const run = requireHookbusRun(`tool ${JSON.stringify(tool.name)} (needsApproval)`);
    if (run.approvals === undefined || callId === undefined) return own(runContext, input, callId);
    const pending = await askToolApproval(run, { toolName: tool.name, toolCallId: callId, input });
    return pending !== undefined || (await own(runContext, input, callId));
  };
}

/** The decision on this call: the input guardrail's, or asked here if it did not run. */
async function decidedInput(
  run: HookbusRun,
  call: FunctionCallLike,
): Promise<PendingCall | { refused: string }> {
  const pending = pendingOf(run).get(call.callId);
  if (pending !== undefined) return pending;
  try {
    const decided = await decideCall(run, call);
    remember(run, call.callId, decided);
    return decided;
  } catch (error) {
    return { refused: refusal(error) };
  }
}

/** How `hookbusTool` wraps a tool. */
export interface HookbusToolOptions {
  /**
   * Surface hookbus approvals as the SDK's run interruptions (`needsApproval`), answered with
   * `state.approve()`/`state.reject()` and a resumed run, in runs with an approver
   * (`withHookbusRun({ ..., approvals })`). Default false: a held call waits inside the tool.
   */
  approvals?: boolean;
}

/**
 * The same function tool with hookbus's guardrails (input last, output first, around the tool's
 * own) and an `invoke` that runs it with the params the policies decided.
 */
export function hookbusTool<T extends AnyFunctionTool>(
  tool: T,
  options: HookbusToolOptions = {},
): T {
  const invoke = tool.invoke;
  return {
    ...tool,
    ...(options.approvals === true ? { needsApproval: withHookbusApproval(tool) } : {}),
    inputGuardrails: [...(tool.inputGuardrails ?? []), inputGuardrail],
    outputGuardrails: [outputGuardrail, ...(tool.outputGuardrails ?? [])],
    invoke: async (runContext: RunContext<unknown>, input: string, details?: ToolCallDetails) => {
      const run = requireHookbusRun(`tool ${JSON.stringify(tool.name)}`);
      const call = details?.toolCall;
      if (call === undefined) {
        // No call id: the after_llm_call allowlist cannot be checked, so the tool is refused.
        return `HookbusError: tool ${JSON.stringify(tool.name)} was invoked without its tool call: hookbus cannot check it`;
      }
      const decided = await decidedInput(run, call);
      if ("refused" in decided) return decided.refused;
      // The model's own text when nothing changed: the SDK then reuses the input it parsed already.
      const args = decided.rewritten ? JSON.stringify(decided.input) : input;
      const started = Date.now();
      try {
        const output: unknown = await invoke(runContext, args, details);
        const pending = pendingOf(run).get(call.callId);
        if (pending !== undefined) pending.durationMs = Date.now() - started;
        return output;
      } catch (error) {
        // The SDK ends the run with a tool's exception: nothing reaches the model to check.
        pendingOf(run).delete(call.callId);
        observeToolCall(run, toolCallRef(call), {
          params: decided.input,
          error: error instanceof Error ? error.message : String(error),
          durationMs: Date.now() - started,
        });
        throw error;
      }
    },
  };
}

/** Each function tool wrapped with `hookbusTool`; other tools (hosted, computer, ...) unchanged. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function hookbusTools<T extends Tool<any>>(
  tools: readonly T[],
  options: HookbusToolOptions = {},
): T[] {
  return tools.map((tool) => (tool.type === "function" ? (hookbusTool(tool, options) as T) : tool));
}
