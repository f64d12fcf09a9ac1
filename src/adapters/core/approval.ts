/**
 * hookbus approvals through a framework's own human-in-the-loop (issue 22): a `requireApproval`
 * verdict becomes the framework's approval request, and the app's answer is sent to the
 * coordinators as the run's approver (`HookbusRunOptions.approvals`), where it is checked like any
 * answer (approver and group, exactly once, one `approval` record). The tool then runs or is
 * refused per the coordinator's settled decision, never per the app's answer alone: an answer
 * for a request already settled (a replay, or a person who answered on the CLI first) changes
 * nothing, and an answer can only reach the request of the call it is executed for.
 *
 * The request is found from the framework's tool call id, not from anything the framework
 * carries: the approval step asks before_tool_call under a callId derived from the tool call id,
 * and the request's id is derived from that callId (with the agent and session) by the
 * coordinator. A resumed run, in this process or another, finds it again the same way.
 */
import { createHash } from "node:crypto";
import type { ApprovalRequest } from "../../catalog/approval.js";
import type { Decision } from "../../catalog/catalog.js";
import { ToolInput } from "../../catalog/common.js";
import { canonicalize } from "../../foundation/canonical-json.js";
import { HookbusError, isHookbusError } from "../../foundation/errors.js";
import { HookbusBlockedError } from "../../agent/blocked.js";
import { answerApproval, showApproval } from "../../approvals/client.js";
import { approvalIdOf, type ApprovalEntry } from "../../approvals/entry.js";
import { scopedMessageId } from "../../log/message-id.js";
import type { FrameworkApprovals, HookbusRun } from "./run.js";
import { toolFields } from "./decide.js";
import { decidedInput, decideToolCall, type ToolCallRef } from "./tool-call.js";

/** A tool call a person must answer: what the framework's approval request shows. */
export interface PendingToolApproval {
  /** The hookbus request's id (`hookbus approvals show ID`). */
  id: string;
  callId: string;
  request: ApprovalRequest;
}

/** The app's answer to a framework approval request. */
export interface ToolApprovalAnswer {
  approved: boolean;
  reason?: string | undefined;
}

/** The framework tool call id's hookbus callId: the same in every process that resumes the run. */
export function approvalCallId(toolCallId: string): string {
  return `tc-${createHash("sha256").update(toolCallId, "utf8").digest("hex").slice(0, 40)}`;
}

/** The id of the request a held tool call opened (the coordinator derives it the same way). */
export function toolApprovalId(run: HookbusRun, toolCallId: string): string {
  const { agentId, sessionKey } = run.context;
  return approvalIdOf(scopedMessageId("decision", agentId, sessionKey, approvalCallId(toolCallId)));
}

/** The run's approver; a coded error when the run was started without one. */
export function runApprovals(run: HookbusRun, where: string): FrameworkApprovals {
  if (run.approvals !== undefined) return run.approvals;
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${where} answers hookbus approvals, and this run has no approver: pass withHookbusRun({ ..., approvals: { nc, approver } })`,
    { argument: "approvals" },
  );
}

function requireCallId(call: ToolCallRef): string {
  if (call.toolCallId !== undefined) return call.toolCallId;
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `tool ${JSON.stringify(call.toolName)}: a framework approval needs the tool call's id`,
    { argument: "toolCallId" },
  );
}

/**
 * The framework's approval step for a tool call: before_tool_call, without waiting for a person.
 * A pending approval is returned for the framework to show. Any other outcome (the input to run
 * with, a block, an error) is kept in the run, and the tool's execution acts on it
 * (`runGatedToolCall`), so the call is decided once.
 *
 * A call asked about before this run's first LLM call comes from an earlier, interrupted run
 * (a resumed run the app did not answer yet): the request that run opened stands, so it is looked
 * up instead of asking again (the callId is taken, and a second decision would be refused).
 */
export async function askToolApproval(
  run: HookbusRun,
  call: ToolCallRef,
): Promise<PendingToolApproval | undefined> {
  const toolCallId = requireCallId(call);
  try {
    if (run.llmCalls === 0) {
      const before = await requestOf(run, toolCallId);
      if (before !== undefined) return askedBefore(run, call, before);
    }
    const callId = approvalCallId(toolCallId);
    const decision = await decideToolCall(run, call, { callId, waitForApproval: false });
    if (decision.outcome === "pending_approval") return pendingOf(decision, callId);
    run.setDecided(toolCallId, Promise.resolve(decidedInput(call, decision)));
  } catch (error) {
    // A block, or a gate that could not decide: the execution refuses the call with it.
    run.setDecided(toolCallId, Promise.reject(asError(error)));
  }
  return undefined;
}

function pendingOf(decision: Decision<"before_tool_call">, callId: string): PendingToolApproval {
  const request = decision.requireApproval;
  if (decision.approval === undefined || request === undefined)
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      "a pending_approval decision without its request",
    );
  return { id: decision.approval.id, callId, request };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new HookbusError("HOOKBUS_INTERNAL", String(error));
}

/** The request a held tool call opened, read as the run's approver; undefined when there is none. */
async function requestOf(run: HookbusRun, toolCallId: string): Promise<ApprovalEntry | undefined> {
  const approvals = runApprovals(run, "the approval step");
  try {
    return await showApproval(approvals.nc, toolApprovalId(run, toolCallId), run.client.namespace);
  } catch (error) {
    if (isHookbusError(error, "HOOKBUS_APPROVAL_NOT_FOUND")) return undefined;
    throw error;
  }
}

/**
 * A call an interrupted run held: its request, still pending, is shown again; settled meanwhile
 * (a person answered on the CLI), its settlement decides the call.
 */
function askedBefore(
  run: HookbusRun,
  call: ToolCallRef,
  entry: ApprovalEntry,
): PendingToolApproval | undefined {
  assertSameCall(entry, call);
  if (entry.settlement === undefined)
    return { id: entry.id, callId: entry.callId, request: entry.request };
  const settled = run.client
    .waitForApproval(run.context.agentId, { id: entry.id, callId: entry.callId })
    .then((decision) => {
      reportSettlement(run, call, entry.callId, decision);
      if (decision.outcome === "block") throw new HookbusBlockedError("before_tool_call", decision);
      return decidedInput(call, decision);
    });
  run.setDecided(requireCallId(call), settled);
  return undefined;
}

/** An approval's settled decision, for the run's `onDecision`. */
function reportSettlement(
  run: HookbusRun,
  call: ToolCallRef,
  callId: string,
  decision: Decision<"before_tool_call">,
): void {
  run.reportDecision({
    hook: "before_tool_call",
    decision,
    source: "approval",
    callId,
    ...toolFields(call),
  });
}

/** The text a framework's approval request shows for a hookbus request. */
export function approvalReason(pending: PendingToolApproval): string {
  const { title, description } = pending.request;
  return `${title}${description === undefined ? "" : `: ${description}`} (hookbus approval ${pending.id})`;
}

/**
 * Whether the request is for this call as it is about to run: the same tool, and the same input
 * unless the policies rewrote it (then the approved params replace the input anyway). A resumed
 * run's input comes from the app's message history, which the app could have changed.
 */
function assertSameCall(entry: ApprovalEntry, call: ToolCallRef): void {
  const rewritten = (entry.decision as { params?: unknown }).params !== undefined;
  const params = ToolInput.parse(call.input);
  const same =
    entry.toolName === call.toolName &&
    (rewritten ||
      (entry.params === undefined
        ? createHash("sha256").update(JSON.stringify(params), "utf8").digest("hex") ===
          entry.paramsDigest
        : canonicalize(entry.params) === canonicalize(params)));
  if (!same)
    throw new HookbusError(
      "HOOKBUS_APPROVAL_DIGEST_MISMATCH",
      `approval ${entry.id} is for ${entry.toolName} with other input than this call of ${call.toolName}: the approval does not cover it`,
      { id: entry.id },
    );
}

/**
 * The app answered the framework's approval request of `call`: send the answer as the run's
 * approver (unless the request is settled already), then follow the coordinator's settled
 * decision. Resolves to the input the tool may run with; throws HookbusBlockedError when the
 * decision blocks (denied, timed out), and a coded error when there is no request for this call
 * (HOOKBUS_APPROVAL_NOT_FOUND), the call changed (HOOKBUS_APPROVAL_DIGEST_MISMATCH) or no
 * coordinator took the answer.
 */
export async function answerToolApproval(
  run: HookbusRun,
  call: ToolCallRef,
  answer: ToolApprovalAnswer,
  from: string,
): Promise<unknown> {
  const approvals = runApprovals(run, "the approval step");
  const toolCallId = requireCallId(call);
  const id = toolApprovalId(run, toolCallId);
  const namespace = run.client.namespace;
  const entry = await showApproval(approvals.nc, id, namespace);
  assertSameCall(entry, call);
  if (entry.settlement === undefined) {
    await sendAnswer(approvals, namespace, {
      id,
      decision: answer.approved ? "approve" : "deny",
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      from: approvals.from ?? from,
      callDigest: entry.callDigest,
    });
  }
  const decision = await run.client.waitForApproval(run.context.agentId, {
    id,
    callId: entry.callId,
  });
  reportSettlement(run, call, entry.callId, decision);
  if (decision.outcome === "block") throw new HookbusBlockedError("before_tool_call", decision);
  return decidedInput(call, decision);
}

/**
 * The app denied a call in the framework (which then never runs the tool): settle its hookbus
 * request as denied, when there is one still pending. A call hookbus did not hold (the app's own
 * approval) or one settled already is left as it is.
 */
export async function denyToolApproval(
  run: HookbusRun,
  toolCallId: string,
  reason: string | undefined,
  from: string,
): Promise<void> {
  const approvals = runApprovals(run, "the approval step");
  try {
    await sendAnswer(approvals, run.client.namespace, {
      id: toolApprovalId(run, toolCallId),
      decision: "deny",
      ...(reason === undefined ? {} : { reason }),
      from: approvals.from ?? from,
    });
  } catch (error) {
    if (isHookbusError(error, "HOOKBUS_APPROVAL_NOT_FOUND")) return;
    throw error;
  }
}

/** One answer; an answer to a request settled meanwhile is no error (the settlement decides). */
async function sendAnswer(
  approvals: FrameworkApprovals,
  namespace: string | undefined,
  answer: Parameters<typeof answerApproval>[1],
): Promise<void> {
  try {
    await answerApproval(approvals.nc, answer, {
      approver: approvals.approver,
      ...(approvals.group === undefined ? {} : { group: approvals.group }),
      ...(namespace === undefined ? {} : { namespace }),
    });
  } catch (error) {
    if (!isHookbusError(error, "HOOKBUS_APPROVAL_SETTLED")) throw error;
  }
}
