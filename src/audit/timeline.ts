/**
 * A session's timeline: its log records in order, each read for a person — which hook, what the
 * agent was told and by whom, what each policy said and how long it took, shadow policies' would-be
 * decision, late verdicts, errors and observations.
 */
import type { Bus } from "../bus/bus.js";
import type { Outcome } from "../catalog/common.js";
import { HookbusError } from "../foundation/errors.js";
import type {
  ApprovalRecord,
  ErasureRecord,
  DecisionRecord,
  ErrorRecord,
  LateVerdictRecord,
  LogRecord,
  ObservationRecord,
  RecordedOutcome,
} from "../log/record.js";
import { isLocalRefusal } from "../log/observation-outcome.js";
import { queryLog, type AuditEntry } from "./query.js";

interface StepBase {
  /** Stream sequence: the timeline is in this order. */
  seq: number;
  storedAt: Date;
  agentId: string;
  sessionKey: string;
  /** The hook as recorded (`unknown` on error records of calls without a valid hook name). */
  hook: string;
  /** One line for people: who decided what, the error, the late verdict, the observed event. */
  summary: string;
}

/** What one policy did in one decision. */
export interface PolicyStep {
  policy: string;
  version?: string;
  priority: number;
  mode: RecordedOutcome["mode"];
  failMode: RecordedOutcome["failMode"];
  status: RecordedOutcome["status"];
  effect: RecordedOutcome["effect"];
  latencyMs: number;
  verdict?: unknown;
  error?: { code: string; message: string };
  /** `block: <reason>`, `sets params`, `no opinion`, `timeout: HOOKBUS_POLICY_TIMEOUT`, ... */
  summary: string;
}

export interface DecisionStep extends StepBase {
  kind: "decision";
  callId: string;
  outcome: Outcome;
  /** For each field the decision set (and `block`), the policies that decided it, in merge order. */
  decidedBy: Record<string, string[]>;
  blockedBy?: string;
  blockReason?: string;
  /** before_agent_reply's reason. */
  reason?: string;
  /** From receiving the call to deciding it (ms). */
  latencyMs: number;
  /** Every policy asked, in merge order (shadow policies included, with mode `shadow`). */
  policies: PolicyStep[];
  /** Present when shadow policies were asked: what enforcing them would have decided. */
  shadow?: {
    changed: boolean;
    outcome: Outcome;
    blockedBy?: string;
    blockReason?: string;
    decidedBy: Record<string, string[]>;
  };
  record: DecisionRecord;
}

export interface ErrorStep extends StepBase {
  kind: "error";
  callId: string;
  error: { code: string; message: string };
  record: ErrorRecord;
}

export interface LateStep extends StepBase {
  kind: "late";
  callId: string;
  policy: string;
  latencyMs: number;
  timeoutMs: number;
  wouldHaveBlocked: boolean;
  record: LateVerdictRecord;
}

export interface ObservationStep extends StepBase {
  kind: "observation";
  eventId: string;
  /**
   * `block` for a refusal no decision record holds (the agent SDK's after_llm_call gate, or an
   * adapter), with `blockedBy` and `blockReason`; `observed` otherwise.
   */
  outcome: "observed" | "block";
  blockedBy?: string;
  blockReason?: string;
  record: ObservationRecord;
}

/** How a pending approval was settled (docs/approvals.md), linked to its decision by `decisionSeq`. */
export interface ApprovalStep extends StepBase {
  kind: "approval";
  callId: string;
  approvalId: string;
  decisionSeq: number;
  resolution: ApprovalRecord["resolution"];
  effect: ApprovalRecord["effect"];
  record: ApprovalRecord;
}

/** A subject's data keys were erased (docs/privacy.md): who, why, and whether a key was there. */
export interface ErasureStep extends StepBase {
  kind: "erasure";
  erasureId: string;
  by: string;
  reason: string;
  record: ErasureRecord;
}

export type TimelineEntry =
  DecisionStep | ErrorStep | LateStep | ObservationStep | ApprovalStep | ErasureStep;

export interface TimelineOptions {
  /** Only this agent's records (a session key may be reused by several agents). */
  agentId?: string | undefined;
  /** Only this run's records (the context's `runId`). */
  runId?: string | undefined;
  signal?: AbortSignal | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function quote(value: unknown): string {
  return typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value ?? null);
}

function names(list: unknown, key: (item: Record<string, unknown>) => unknown): string {
  if (!Array.isArray(list)) return quote(list);
  const name = (item: unknown): string => {
    const value = isRecord(item) ? key(item) : item;
    return typeof value === "string" ? value : quote(value);
  };
  return `[${list.map(name).join(", ")}]`;
}

function toolName(item: Record<string, unknown>): unknown {
  return isRecord(item.function) ? item.function.name : item.name;
}

/** A verdict in a few words: `block: <reason>`, `reply; reason: "hi"`, `sets params`, `no opinion`. */
export function summarizeVerdict(verdict: unknown): string {
  if (verdict === undefined || verdict === null) return "no opinion";
  if (!isRecord(verdict)) return `verdict ${quote(verdict)}`;
  const parts: string[] = [];
  if (verdict.block === true)
    parts.push(typeof verdict.blockReason === "string" ? `block: ${verdict.blockReason}` : "block");
  for (const [field, value] of Object.entries(verdict)) {
    if (field === "block" || field === "blockReason" || value === undefined) continue;
    if (field === "reason") parts.push(`reason: ${quote(value)}`);
    else if (field === "reply") parts.push("reply");
    else if (field === "tools") parts.push(`tools: ${names(value, toolName)}`);
    else if (field === "toolCalls") parts.push(`toolCalls: ${names(value, (c) => c.id)}`);
    else parts.push(`sets ${field}`);
  }
  return parts.length === 0 ? "no opinion" : parts.join("; ");
}

/** One policy's outcome in a few words (its verdict, or its failure). */
export function summarizeOutcome(outcome: RecordedOutcome): string {
  if (outcome.status !== "ok") {
    const error =
      outcome.error === undefined ? "" : `: ${outcome.error.code} ${outcome.error.message}`;
    return `${outcome.status}${error}`;
  }
  return summarizeVerdict(outcome.verdict);
}

/** Who decided what: `blocked by no-shell: <reason>`, `reply by greeter`, `content by redactor`. */
export function summarizeDecision(decision: Record<string, unknown>): string {
  const outcome = decision.outcome;
  const by = isRecord(decision.decidedBy) ? (decision.decidedBy as Record<string, string[]>) : {};
  if (outcome === "block") {
    const who = typeof decision.blockedBy === "string" ? decision.blockedBy : "?";
    return typeof decision.blockReason === "string"
      ? `blocked by ${who}: ${decision.blockReason}`
      : `blocked by ${who}`;
  }
  if (outcome === "reply") {
    const reason = typeof decision.reason === "string" ? ` (reason: ${decision.reason})` : "";
    return `reply by ${(by.reply ?? ["?"]).join(", ")}${reason}`;
  }
  const fields = Object.entries(by).map(([field, who]) => `${field} by ${who.join(", ")}`);
  return fields.length === 0 ? "-" : fields.join("; ");
}

function decisionSummary(record: DecisionRecord): string {
  const own = summarizeDecision(record.decision);
  const shadow = record.shadow;
  if (shadow === undefined || !shadow.changed) return own;
  return `${own} | shadow would: ${String(shadow.decision.outcome)} (${summarizeDecision(shadow.decision)})`;
}

function lateSummary(record: LateVerdictRecord): string {
  const when = `late verdict of ${record.policy} (${round(record.latencyMs)} ms, deadline ${record.timeoutMs} ms)`;
  if (record.error !== undefined) return `${when}: ${record.error.code} ${record.error.message}`;
  if (!record.wouldHaveBlocked)
    return `${when}: would not have blocked (${summarizeVerdict(record.verdict)})`;
  const verdict = isRecord(record.verdict) ? record.verdict : {};
  const reason = typeof verdict.blockReason === "string" ? `: ${verdict.blockReason}` : "";
  return `${when}: would have blocked${reason}`;
}

/** Who refused the call: "the after_llm_call gate" or "the adapter". */
const REFUSED_BY: Record<string, string> = {
  after_llm_call_gate: "the after_llm_call gate",
  adapter: "the adapter",
};

function observationSummary(record: ObservationRecord): string {
  const e = record.event;
  if (isLocalRefusal(record.hook, e)) {
    // Read like a decision's line: who blocked, why, and where it was enforced.
    // An adapter's own refusal names no policy: the refusing source is who blocked it.
    const source = REFUSED_BY[String(e.blockSource)] ?? "an unnamed source";
    const tool = typeof e.toolName === "string" ? `tool ${e.toolName} ` : "";
    const reason = typeof e.blockReason === "string" ? `: ${e.blockReason}` : "";
    if (typeof e.blockedBy !== "string") return `${tool}blocked by ${source}${reason}`;
    return `${tool}blocked by ${e.blockedBy}${reason} (refused by ${source})`;
  }
  const parts: string[] = [];
  if (typeof e.toolName === "string") parts.push(`tool ${e.toolName}`);
  if (typeof e.model === "string") parts.push(`model ${e.model}`);
  if (e.blocked === true) parts.push("blocked");
  if (e.error !== undefined && e.error !== null && e.error !== false) parts.push("error");
  return parts.length === 0 ? "-" : parts.join(", ");
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** A summary line for any record (the `decided by / reason` column of `hookbus audit query`). */
export function summarizeRecord(record: LogRecord): string {
  switch (record.kind) {
    case "decision":
      return decisionSummary(record);
    case "error":
      return `${record.error.code}: ${record.error.message}`;
    case "late":
      return lateSummary(record);
    case "observation":
      return observationSummary(record);
    case "approval":
      return approvalSummary(record);
    case "erasure":
      return `erased ${record.target} ${record.subject.slice(0, 12)}… by ${record.by}: ${quote(record.reason)}`;
  }
}

/** `approved by alice ("ok"), decision #12` or `timed-out: deny, decision #12`. */
export function approvalSummary(record: ApprovalRecord): string {
  const who = record.answers.map((a) => a.approver).join(", ");
  const reason = record.reason === undefined ? "" : ` (${quote(record.reason)})`;
  const head =
    record.resolution === "timed-out"
      ? `timed out: ${record.effect}`
      : record.resolution === "erased"
        ? `settled by the erasure of subject ${record.erasedSubject?.slice(0, 12) ?? "?"}…: ${record.effect}`
        : `${record.resolution} by ${who || "?"}${reason}`;
  // The approval would have let the call run; a stop in force by then blocked it (issue 31.2).
  const stop =
    record.stop === undefined
      ? ""
      : `, blocked by the emergency stop of ${record.stop.kind} ${record.stop.name} (by ${record.stop.by})`;
  return `${head}${stop}, decision #${record.decisionSeq}`;
}

/** How long the record's interception took (ms): a decision's total, a late verdict's latency. */
export function recordLatencyMs(record: LogRecord): number | undefined {
  if (record.kind === "decision")
    return Math.max(0, Date.parse(record.decidedAt) - Date.parse(record.receivedAt));
  if (record.kind === "late") return record.latencyMs;
  return undefined;
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function policyStep(o: RecordedOutcome): PolicyStep {
  return {
    policy: o.policy,
    ...optional("version", o.version),
    priority: o.priority,
    mode: o.mode,
    failMode: o.failMode,
    status: o.status,
    effect: o.effect,
    latencyMs: o.latencyMs,
    ...optional("verdict", o.verdict),
    ...optional(
      "error",
      o.error === undefined ? undefined : { code: o.error.code, message: o.error.message },
    ),
    summary: summarizeOutcome(o),
  };
}

type ShadowDecision = NonNullable<Extract<AuditEntry["record"], { kind: "decision" }>["shadow"]>;

/** What the shadow policies would have decided, as the timeline shows it. */
function shadowStep(shadow: ShadowDecision) {
  return {
    changed: shadow.changed,
    outcome: shadow.decision.outcome as Outcome,
    ...optional("blockedBy", str(shadow.decision.blockedBy)),
    ...optional("blockReason", str(shadow.decision.blockReason)),
    decidedBy: (isRecord(shadow.decision.decidedBy) ? shadow.decision.decidedBy : {}) as Record<
      string,
      string[]
    >,
  };
}

/** Reads one log entry as a timeline step. */
export function toTimelineEntry(entry: AuditEntry): TimelineEntry {
  const { record } = entry;
  const base = {
    seq: entry.seq,
    storedAt: entry.storedAt,
    agentId: entry.address.agentId,
    sessionKey: entry.address.sessionKey,
    hook: record.hook,
    summary: summarizeRecord(record),
  };
  switch (record.kind) {
    case "decision": {
      const d = record.decision;
      const shadow = record.shadow;
      return {
        ...base,
        kind: "decision",
        callId: record.callId,
        outcome: d.outcome as Outcome,
        decidedBy: (isRecord(d.decidedBy) ? d.decidedBy : {}) as Record<string, string[]>,
        ...optional("blockedBy", str(d.blockedBy)),
        ...optional("blockReason", str(d.blockReason)),
        ...optional("reason", str(d.reason)),
        latencyMs: recordLatencyMs(record)!,
        policies: record.outcomes.map(policyStep),
        ...optional("shadow", shadow === undefined ? undefined : shadowStep(shadow)),
        record,
      };
    }
    case "error":
      return {
        ...base,
        kind: "error",
        callId: record.callId,
        error: { code: record.error.code, message: record.error.message },
        record,
      };
    case "late":
      return {
        ...base,
        kind: "late",
        callId: record.callId,
        policy: record.policy,
        latencyMs: record.latencyMs,
        timeoutMs: record.timeoutMs,
        wouldHaveBlocked: record.wouldHaveBlocked,
        record,
      };
    case "observation": {
      const refused = isLocalRefusal(record.hook, record.event);
      return {
        ...base,
        kind: "observation",
        eventId: record.eventId,
        outcome: refused ? "block" : "observed",
        ...optional("blockedBy", refused ? str(record.event.blockedBy) : undefined),
        ...optional("blockReason", refused ? str(record.event.blockReason) : undefined),
        record,
      };
    }
    case "approval":
      return {
        ...base,
        kind: "approval",
        callId: record.callId,
        approvalId: record.approvalId,
        decisionSeq: record.decisionSeq,
        resolution: record.resolution,
        effect: record.effect,
        record,
      };
    case "erasure":
      return erasureStep(base, record);
  }
}

function erasureStep(base: StepBase, record: ErasureRecord): ErasureStep {
  return {
    ...base,
    kind: "erasure",
    erasureId: record.erasureId,
    by: record.by,
    reason: record.reason,
    record,
  };
}

/**
 * The session's records in log order, as timeline steps: every interception (who decided what,
 * each policy's status, effect and latency, the shadow decision), late verdicts, errors and
 * observations. Empty when the log holds nothing for the session. Filtered by the server on the
 * session (and agent) subject tokens.
 */
export async function sessionTimeline(
  bus: Bus,
  sessionKey: string,
  options: TimelineOptions = {},
): Promise<TimelineEntry[]> {
  if (typeof sessionKey !== "string" || sessionKey.length === 0)
    throw new HookbusError("HOOKBUS_INVALID_ARGUMENT", "a session key is required", {
      argument: "sessionKey",
    });
  const entries: TimelineEntry[] = [];
  const query = queryLog(
    bus,
    {
      sessionKey,
      ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
      ...(options.runId === undefined ? {} : { runId: options.runId }),
    },
    { signal: options.signal },
  );
  for await (const entry of query) entries.push(toTimelineEntry(entry));
  return entries;
}
