/**
 * What the approvals page shows of an indexed record, read tolerantly (records are indexed as
 * stored, not re-validated): a pending request from its `pending_approval` decision, a settled one
 * from its approval record, and the CLI commands an approver pastes. Pure, so unit-tested alone.
 */
import { APPROVAL_ID_PATTERN, approvalIdOf } from "../approvals/entry.js";
import { APPROVER_GROUP_PATTERN } from "../catalog/approval.js";
import type { AuditEntry } from "../audit/query.js";
import { scopedMessageId } from "../log/message-id.js";

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Obj)
    : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function time(value: unknown): Date | undefined {
  if (typeof value !== "string") return undefined;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

export interface PendingView {
  seq: number;
  approvalId: string;
  agentId: string;
  sessionKey: string;
  callId: string;
  toolName: string;
  title: string;
  description: string | undefined;
  severity: string;
  approvers: string[];
  /** The asking policies, in merge order. */
  askedBy: string[];
  requestedAt: Date;
  /** requestedAt + the request's timeoutMs (the bucket's own expiry is a moment later). */
  expiresAt: Date | undefined;
  timeoutBehavior: string;
}

/**
 * The request's id: as the decision carries it (`decision.approval.id`), else derived the way
 * the coordinator derives it (src/approvals/entry.ts approvalIdOf of the call's scoped id).
 */
export function approvalIdOfDecision(
  agentId: string,
  sessionKey: string,
  callId: string,
  decision: Obj | undefined,
): string {
  const carried = str(obj(decision?.approval)?.id);
  if (carried !== undefined && APPROVAL_ID_PATTERN.test(carried)) return carried;
  return approvalIdOf(scopedMessageId("decision", agentId, sessionKey, callId));
}

export function pendingView(entry: AuditEntry): PendingView {
  const record = entry.record as unknown as Obj;
  const decision = obj(record.decision);
  const request = obj(decision?.requireApproval) ?? {};
  const event = obj(record.event) ?? {};
  const { agentId, sessionKey } = entry.address;
  const callId = str(record.callId) ?? "";
  const requestedAt = time(record.decidedAt) ?? entry.storedAt;
  const timeoutMs = request.timeoutMs;
  const askedBy = Array.isArray(request.askedBy) ? request.askedBy : [];
  const approvers = Array.isArray(request.approvers) ? request.approvers : [];
  return {
    seq: entry.seq,
    approvalId: approvalIdOfDecision(agentId, sessionKey, callId, decision),
    agentId,
    sessionKey,
    callId,
    toolName: str(event.toolName) ?? "?",
    title: str(request.title) ?? "(no title)",
    description: str(request.description),
    severity: str(request.severity) ?? "medium",
    approvers: approvers.filter((a): a is string => typeof a === "string"),
    askedBy: askedBy.map((a) => str(obj(a)?.policy)).filter((p): p is string => p !== undefined),
    requestedAt,
    expiresAt:
      typeof timeoutMs === "number" && Number.isFinite(timeoutMs)
        ? new Date(requestedAt.getTime() + timeoutMs)
        : undefined,
    timeoutBehavior: str(request.timeoutBehavior) ?? "deny",
  };
}

export interface AnswerView {
  approver: string;
  group: string;
  decision: string;
  reason: string | undefined;
  from: string | undefined;
  at: string | undefined;
}

/** A URL that is safe to paste into a shell as one word. */
const SAFE_URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[A-Za-z0-9.:[\]_-]+(\/[A-Za-z0-9._~/-]*)?$/;

export interface SettledView {
  seq: number;
  approvalId: string;
  agentId: string;
  sessionKey: string;
  callId: string;
  decisionSeq: number | undefined;
  resolution: string;
  effect: string;
  reason: string | undefined;
  answers: AnswerView[];
  requestedAt: string | undefined;
  resolvedAt: string | undefined;
}

export function settledView(entry: AuditEntry): SettledView {
  const record = entry.record as unknown as Obj;
  const answers = Array.isArray(record.answers) ? record.answers : [];
  const decisionSeq = record.decisionSeq;
  return {
    seq: entry.seq,
    approvalId: str(record.approvalId) ?? "?",
    agentId: entry.address.agentId,
    sessionKey: entry.address.sessionKey,
    callId: str(record.callId) ?? "",
    decisionSeq:
      typeof decisionSeq === "number" && Number.isSafeInteger(decisionSeq) && decisionSeq > 0
        ? decisionSeq
        : undefined,
    resolution: str(record.resolution) ?? "?",
    effect: str(record.effect) ?? "?",
    reason: str(record.reason),
    answers: answers.map((a) => {
      const o = obj(a) ?? {};
      return {
        approver: str(o.approver) ?? "?",
        group: str(o.group) ?? "-",
        decision: str(o.decision) ?? "?",
        reason: str(o.reason),
        from: str(o.from),
        at: str(o.at),
      };
    }),
    requestedAt: str(record.requestedAt),
    resolvedAt: str(record.resolvedAt),
  };
}

/**
 * The commands an approver pastes (docs/approvals.md, "Answering"): one per named group (each
 * group must answer), `--as` left for the approver to fill in. Only checked tokens go in, so a
 * command never carries text a policy wrote.
 */
export function answerCommands(view: PendingView, namespace: string, natsUrl?: string): string[] {
  if (!APPROVAL_ID_PATTERN.test(view.approvalId)) return [];
  // Pasted in another shell, on another machine perhaps: say which server and namespace.
  const server = natsUrl === undefined || !SAFE_URL.test(natsUrl) ? "" : ` --server ${natsUrl}`;
  const ns = `${server} --namespace ${namespace}`;
  const groups = view.approvers.filter((g) => APPROVER_GROUP_PATTERN.test(g));
  const base = `npx hookbus approvals approve ${view.approvalId} --as YOUR_NAME${ns}`;
  const reason = ` --reason "…"`;
  if (groups.length === 0) return [`${base}${reason}`];
  return groups.map((g) => `${base} --group ${g}${reason}`);
}
