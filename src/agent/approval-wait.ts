/**
 * The agent's side of a pending approval (docs/approvals.md): ask the coordinators for the
 * request's state until it is settled and recorded, telling the caller's progress callback at
 * each poll. The wait is bounded by the request's own deadline (plus a grace for the coordinator
 * that records the timeout); a coordinator restart is a few failed polls, nothing more, because
 * the request lives in the approvals bucket.
 */
import type { Bus } from "../bus/bus.js";
import { Header } from "../bus/headers.js";
import type { ApprovalRequest } from "../catalog/approval.js";
import type { Decision } from "../catalog/catalog.js";
import { parseDecision } from "../catalog/validate.js";
import { ErrorCodes, HookbusError, type ErrorCode } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { ApprovalReply } from "../approvals/wire.js";

/** What the progress callback is told at each poll while a person has not answered. */
export interface ApprovalProgress {
  id: string;
  callId: string;
  request: ApprovalRequest;
  toolName: string;
  /** The params the approval is for (as merged), unless they were too large to show. */
  params?: Record<string, unknown>;
  expiresAt: Date;
  remainingMs: number;
  /** Groups that approved so far (a request naming several needs each). */
  approvedBy: string[];
}

export type ApprovalProgressCallback = (progress: ApprovalProgress) => void;

export interface ApprovalWaiter {
  wait(
    agentId: string,
    callId: string,
    decision: Decision<"before_tool_call">,
    onProgress?: ApprovalProgressCallback,
  ): Promise<Decision<"before_tool_call">>;
}

export interface ApprovalWaitOptions {
  /** Between status questions (ms). Default 1000. */
  pollIntervalMs?: number;
  /** Past the request's deadline, how long to wait for a coordinator to record the timeout. Default 30 s. */
  graceMs?: number;
}

/** Codes after which polling again cannot help. */
const FINAL: readonly ErrorCode[] = [
  "HOOKBUS_APPROVAL_NOT_FOUND",
  "HOOKBUS_APPROVAL_FORBIDDEN",
  "HOOKBUS_BAD_MESSAGE",
  "HOOKBUS_INVALID_ARGUMENT",
];

export class NatsApprovalWaiter implements ApprovalWaiter {
  private readonly pollIntervalMs: number;
  private readonly graceMs: number;

  constructor(
    private readonly bus: Bus,
    options: ApprovalWaitOptions = {},
  ) {
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.graceMs = options.graceMs ?? 30_000;
  }

  async wait(
    agentId: string,
    callId: string,
    decision: Decision<"before_tool_call">,
    onProgress?: ApprovalProgressCallback,
  ): Promise<Decision<"before_tool_call">> {
    const id = decision.approval?.id;
    const request = decision.requireApproval;
    if (id === undefined || request === undefined)
      throw new HookbusError(
        "HOOKBUS_BAD_MESSAGE",
        "a pending_approval decision without its request",
      );
    const subject = this.bus.subjects.approvalStatus(agentId);
    const body = new TextEncoder().encode(JSON.stringify({ id }));
    let deadline = Date.now() + request.timeoutMs + this.graceMs;
    let lastProblem = "no coordinator answered";
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      try {
        const msg = await this.bus.nc.request(subject, body, {
          timeout: Math.max(100, Math.min(5000, remaining)),
        });
        const text = new TextDecoder().decode(msg.data);
        const code = msg.headers?.get(Header.ErrorCode);
        if (code !== undefined && code !== "") {
          const known = Object.hasOwn(ErrorCodes, code) ? (code as ErrorCode) : "HOOKBUS_INTERNAL";
          const message = (JSON.parse(text) as { error?: { message?: string } }).error?.message;
          if (FINAL.includes(known)) throw new HookbusError(known, message ?? code, { id });
          lastProblem = `${code}: ${message ?? ""}`;
        } else {
          const reply = ApprovalReply.parse(JSON.parse(text));
          if (reply.entry.callId !== callId || reply.id !== id)
            throw new HookbusError(
              "HOOKBUS_APPROVAL_FORBIDDEN",
              `approval ${id} answered for another call`,
              { id },
            );
          deadline = Date.parse(reply.entry.expiresAt) + this.graceMs;
          if (reply.state === "settled" && reply.decision !== undefined)
            return parseDecision("before_tool_call", reply.decision);
          onProgress?.({
            id,
            callId,
            request,
            toolName: reply.entry.toolName,
            ...(reply.entry.params === undefined ? {} : { params: reply.entry.params }),
            expiresAt: new Date(reply.entry.expiresAt),
            remainingMs: Math.max(0, Date.parse(reply.entry.expiresAt) - Date.now()),
            approvedBy: reply.entry.answers
              .filter((a) => a.decision === "approve")
              .map((a) => a.group),
          });
        }
      } catch (error) {
        if (error instanceof HookbusError) throw error;
        // No responders, a timeout, a reconnect: the request is durable; ask again.
        lastProblem = String((error as Error).message ?? error);
      }
      await sleep(Math.min(this.pollIntervalMs, Math.max(0, deadline - Date.now())));
    }
    throw new HookbusError(
      "HOOKBUS_APPROVAL_UNRESOLVED",
      `approval ${id} was not settled before the deadline (${lastProblem}); the call fails closed`,
      { id, callId },
    );
  }
}
