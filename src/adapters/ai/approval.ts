/**
 * hookbus approvals as the AI SDK's own tool approval (`toolApproval` of generateText,
 * streamText and ToolLoopAgent; docs/adapters/ai-sdk.md):
 *
 * 1. A tool call a policy holds (`requireApproval`) becomes a `tool-approval-request` part: the
 *    step ends without running the tool, and the request's `reason` shows the policy's title.
 * 2. The app answers it the AI SDK's way (a `tool-approval-response` in the next tool message;
 *    `addToolApprovalResponse` in a chat UI) and calls the SDK again.
 * 3. An approval is sent to the coordinators as the run's approver, and the SDK runs the tool only
 *    if the coordinator's settled decision allows it (with the approved params); otherwise the
 *    call is denied with the decision's reason. A denial is sent when the SDK hands the model the
 *    denied call (hookbusMiddleware, before the next LLM call): the SDK never runs a denied tool.
 *
 * Calls no policy holds are decided here too (the tool's execution uses that decision, so each
 * call has one decision record), and left to the SDK as `not-applicable`.
 */
import type { ModelMessage, ToolApprovalStatus } from "ai";
import { isHookbusBlockedError } from "../../agent/blocked.js";
import { HookbusError } from "../../foundation/errors.js";
import {
  answerToolApproval,
  approvalReason,
  askToolApproval,
  denyToolApproval,
  runApprovals,
} from "../core/approval.js";
import { requireHookbusRun, type HookbusRun } from "../core/run.js";
import type { ToolCallRef } from "../core/tool-call.js";

/** What the `from` of an answer says when the run's approver does not say otherwise. */
export const AI_SDK_FROM = "ai-sdk";

/** Marks the tools `hookbusTools` wrapped: only their calls are decided by the approval step. */
export const HOOKBUS_TOOL = Symbol.for("hookbus.ai.tool");

/** The part of the AI SDK's approval-function options this step reads. */
export interface ToolApprovalOptions {
  /** The call the SDK asks about. */
  toolCall: { toolCallId: string; toolName: string; input: unknown };
  /** The run's tools: only calls of tools `hookbusTools` wrapped are decided here. */
  tools?: Record<string, unknown> | undefined;
  /** The conversation so far: a resumed run's last tool message holds the app's answers. */
  messages: readonly ModelMessage[];
}

/**
 * The `toolApproval` function for generateText / streamText / ToolLoopAgent: hookbus decides
 * which calls of `hookbusTools` tools need a person, and the app's answers settle hookbus's
 * requests. Runs inside `withHookbusRun` with `approvals` (the approver the answers are sent as).
 */
export function hookbusToolApproval(): (
  options: ToolApprovalOptions,
) => Promise<ToolApprovalStatus> {
  return async ({ toolCall, tools, messages }) => {
    const run = requireHookbusRun("hookbusToolApproval");
    runApprovals(run, "hookbusToolApproval");
    const tool = tools?.[toolCall.toolName] as Record<symbol, unknown> | undefined;
    if (tool?.[HOOKBUS_TOOL] !== true) return undefined;
    const call: ToolCallRef = {
      toolName: toolCall.toolName,
      toolCallId: toolCall.toolCallId,
      input: toolCall.input,
    };
    const answer = answerIn(messages, toolCall.toolCallId);
    if (answer !== undefined) return settle(run, call, answer);
    const pending = await askToolApproval(run, call);
    return pending === undefined
      ? undefined
      : { type: "user-approval", reason: approvalReason(pending) };
  };
}

/** The app answered: the SDK runs the tool only if the coordinator's decision allows it. */
async function settle(
  run: HookbusRun,
  call: ToolCallRef,
  answer: { approved: boolean; reason?: string },
): Promise<ToolApprovalStatus> {
  try {
    const input = await answerToolApproval(run, call, answer, AI_SDK_FROM);
    run.setDecided(toolCallIdOf(call), Promise.resolve(input));
    return { type: "approved" };
  } catch (error) {
    if (isHookbusBlockedError(error))
      return { type: "denied", reason: error.blockReason ?? "blocked" };
    if (error instanceof HookbusError)
      return { type: "denied", reason: `not approved by hookbus: ${error.code}: ${error.message}` };
    throw error;
  }
}

function toolCallIdOf(call: ToolCallRef): string {
  return call.toolCallId ?? "";
}

/**
 * The app's answer to the approval request of `toolCallId` in the tool message that ends
 * `messages` (where the AI SDK reads answers), found through the request it answers.
 */
function answerIn(
  messages: readonly ModelMessage[],
  toolCallId: string,
): { approved: boolean; reason?: string } | undefined {
  const last = messages.at(-1);
  if (last?.role !== "tool") return undefined;
  const requested = new Map<string, string>();
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    for (const part of message.content)
      if (part.type === "tool-approval-request") requested.set(part.approvalId, part.toolCallId);
  }
  for (const part of last.content) {
    if (part.type !== "tool-approval-response") continue;
    if (requested.get(part.approvalId) !== toolCallId) continue;
    return {
      approved: part.approved,
      ...(part.reason === undefined ? {} : { reason: part.reason }),
    };
  }
  return undefined;
}

/** A prompt part of a tool message, as the middleware sees it (only the fields read here). */
interface PromptToolPart {
  type: string;
  toolCallId?: string;
  output?: { type: string; reason?: string };
}

/**
 * The denials the SDK hands the model in this LLM call (the tool messages after the last
 * assistant message): each settles its hookbus request as denied, when hookbus held that call.
 */
export async function settleDenials(
  run: HookbusRun,
  prompt: readonly { role: string; content: unknown }[],
): Promise<void> {
  if (run.approvals === undefined) return;
  for (let i = prompt.length - 1; i >= 0; i--) {
    const message = prompt[i]!;
    if (message.role === "assistant") return;
    if (message.role !== "tool" || !Array.isArray(message.content)) continue;
    for (const part of message.content as PromptToolPart[]) {
      if (part.type !== "tool-result" || part.output?.type !== "execution-denied") continue;
      if (part.toolCallId === undefined) continue;
      await denyToolApproval(run, part.toolCallId, part.output.reason, AI_SDK_FROM);
    }
  }
}
