/**
 * The agent's side of a pending approval (docs/approvals.md): ask the coordinators for the
 * request's state until it is settled and recorded, telling the caller's progress callback each
 * time the request changes (first seen, an answer from one of several groups, a new deadline),
 * not at every poll. The wait is bounded by the request's own deadline (plus a grace for the
 * coordinator that records the timeout), and ends at once when the client closes; a coordinator
 * restart is a few failed polls, nothing more, because the request lives in the approvals bucket.
 */
import type { Bus } from "../bus/bus.js";
import { Header } from "../bus/headers.js";
import type { ApprovalRequest } from "../catalog/approval.js";
import type { Decision } from "../catalog/catalog.js";
import { parseDecision } from "../catalog/validate.js";
import { ErrorCodes, HookbusError, type ErrorCode } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { ApprovalReply } from "../approvals/wire.js";

/** What the progress callback is told when a request a person has not settled changes. */
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

/** The request waited for: its id, the call it holds, and how long it may take (ms). */
export interface ApprovalTarget {
  id: string;
  callId: string;
  /** The request's timeout when known (the first answer's `expiresAt` replaces it). */
  timeoutMs?: number;
}

export interface ApprovalWaiter {
  wait(
    agentId: string,
    target: ApprovalTarget,
    onProgress?: ApprovalProgressCallback,
    signal?: AbortSignal,
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

/** The error a wait ends with when its client closes. */
export function closedWait(id: string, callId: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_CLIENT_CLOSED",
    `approval ${id}: the client was closed while the call waited for it; the call fails closed (the request stays in the approvals bucket)`,
    { id, callId },
  );
}

/** `promise`, or the abort's error as soon as `signal` aborts (the promise is left to settle). */
function unlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  onAbort: () => Error,
): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(onAbort());
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(onAbort());
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What the progress callback is told of a pending reply. */
function progressOf(target: ApprovalTarget, reply: ApprovalReply): ApprovalProgress {
  const { entry } = reply;
  return {
    id: target.id,
    callId: target.callId,
    request: entry.request,
    toolName: entry.toolName,
    ...(entry.params === undefined ? {} : { params: entry.params }),
    expiresAt: new Date(entry.expiresAt),
    remainingMs: Math.max(0, Date.parse(entry.expiresAt) - Date.now()),
    approvedBy: entry.answers.filter((a) => a.decision === "approve").map((a) => a.group),
  };
}

/** What makes two pending replies the same state for the caller (not the clock). */
function stateKey(progress: ApprovalProgress): string {
  return JSON.stringify([progress.expiresAt.getTime(), [...progress.approvedBy].sort()]);
}

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
    target: ApprovalTarget,
    onProgress?: ApprovalProgressCallback,
    signal?: AbortSignal,
  ): Promise<Decision<"before_tool_call">> {
    const { id, callId } = target;
    const closed = () => closedWait(id, callId);
    let deadline = Date.now() + (target.timeoutMs ?? 0) + this.graceMs;
    let lastProblem = "no coordinator answered";
    let lastState: string | undefined;
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const asked = await unlessAborted(this.ask(agentId, id, remaining), signal, closed);
      if (asked.problem !== undefined) lastProblem = asked.problem;
      else {
        const reply = asked.reply;
        if (reply.entry.callId !== callId || reply.id !== id)
          throw new HookbusError(
            "HOOKBUS_APPROVAL_FORBIDDEN",
            `approval ${id} answered for another call`,
            { id },
          );
        deadline = Date.parse(reply.entry.expiresAt) + this.graceMs;
        if (reply.state === "settled" && reply.decision !== undefined)
          return parseDecision("before_tool_call", reply.decision);
        const progress = progressOf(target, reply);
        const state = stateKey(progress);
        if (state !== lastState) onProgress?.(progress);
        lastState = state;
      }
      await unlessAborted(
        sleep(Math.min(this.pollIntervalMs, Math.max(0, deadline - Date.now()))),
        signal,
        closed,
      );
    }
    throw new HookbusError(
      "HOOKBUS_APPROVAL_UNRESOLVED",
      `approval ${id} was not settled before the deadline (${lastProblem}); the call fails closed`,
      { id, callId },
    );
  }

  /** One status question: the reply, or why there was none (throws when asking again cannot help). */
  private async ask(
    agentId: string,
    id: string,
    remaining: number,
  ): Promise<{ reply: ApprovalReply; problem?: undefined } | { problem: string }> {
    const subject = this.bus.subjects.approvalStatus(agentId);
    const body = new TextEncoder().encode(JSON.stringify({ id }));
    let msg;
    try {
      msg = await this.bus.nc.request(subject, body, {
        timeout: Math.max(100, Math.min(5000, remaining)),
      });
    } catch (error) {
      // No responders, a timeout, a reconnect: the request is durable; ask again.
      return { problem: String((error as Error).message ?? error) };
    }
    const text = new TextDecoder().decode(msg.data);
    const code = msg.headers?.get(Header.ErrorCode);
    if (code === undefined || code === "") {
      const parsed = ApprovalReply.safeParse(safeJson(text));
      return parsed.success ? { reply: parsed.data } : { problem: "a malformed status reply" };
    }
    const known = Object.hasOwn(ErrorCodes, code) ? (code as ErrorCode) : "HOOKBUS_INTERNAL";
    const message = (safeJson(text) as { error?: { message?: string } } | undefined)?.error
      ?.message;
    if (FINAL.includes(known)) throw new HookbusError(known, message ?? code, { id });
    return { problem: `${code}: ${message ?? ""}` };
  }
}
