/**
 * What an audit query can ask for, and which part of it the server answers. The log's subjects
 * are `<ns>.audit.<agent>.<session>.<hook>.<outcome>`, so agent, session, hook and outcome become
 * ONE subject filter (nats-server 2.9 takes one filter subject per consumer) and `since` becomes
 * the consumer's start time: the server skips everything else. Policy, `until`, `shadowChanged`
 * and `limit` are not in the subject; the reader checks them on each record it receives.
 */
import type { AuditSubjectFilter, RecordKind } from "../bus/subjects.js";
import { POLICY_NAME_PATTERN } from "../bus/tokens.js";
import { HOOK_NAMES, isHookName, type HookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { LogEntry } from "../log/reader.js";

/** The outcome token of a record: a decision's outcome, or `error`, `late`, `observed`. */
export const AUDIT_OUTCOMES = [
  "allow",
  "modify",
  "block",
  "reply",
  "pending_approval",
  "approval",
  "error",
  "late",
  "observed",
] as const satisfies readonly RecordKind[];

export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** The hook token of error records whose call named no valid hook. */
export const UNKNOWN_HOOK = "unknown";

export interface AuditFilter {
  /** Server-side (subject). */
  agentId?: string | undefined;
  /** Server-side (subject). */
  sessionKey?: string | undefined;
  /** Server-side (subject). `unknown` finds error records of calls with an invalid hook name. */
  hook?: HookName | typeof UNKNOWN_HOOK | undefined;
  /** Server-side (subject): a decision's outcome, or the record kind `error`, `late`, `observed`. */
  outcome?: AuditOutcome | undefined;
  /** Client-side: records of this run (the context's `runId`). */
  runId?: string | undefined;
  /** Client-side: decisions that asked this policy (any mode), its late verdicts, and refusals it decided. */
  policy?: string | undefined;
  /** Server-side (consumer start time): records stored at or after this time. */
  since?: Date | undefined;
  /** Client-side: records stored at or before this time; the read stops at the first later one. */
  until?: Date | undefined;
  /** Client-side: only decisions whose shadow policies would have changed the outcome. */
  shadowChanged?: boolean | undefined;
  /** Client-side: stop after this many matching records. */
  limit?: number | undefined;
}

function invalid(argument: string, message: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_ARGUMENT", message, { argument });
}

function checkId(value: unknown, argument: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0)
    throw invalid(argument, `${argument} must be a non-empty string, got ${JSON.stringify(value)}`);
  return value;
}

function checkDate(value: unknown, argument: string): Date | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof Date) || Number.isNaN(value.getTime()))
    throw invalid(
      argument,
      `${argument} must be a valid Date, got ${value instanceof Date ? "an invalid Date" : typeof value}`,
    );
  return value;
}

export function isAuditOutcome(value: unknown): value is AuditOutcome {
  return typeof value === "string" && (AUDIT_OUTCOMES as readonly string[]).includes(value);
}

/**
 * Checks a filter (throws HOOKBUS_INVALID_ARGUMENT naming the field) and returns it with
 * absent fields left out.
 */
export function checkAuditFilter(filter: AuditFilter = {}): AuditFilter {
  const checked: AuditFilter = {};
  const agentId = checkId(filter.agentId, "agentId");
  if (agentId !== undefined) checked.agentId = agentId;
  const sessionKey = checkId(filter.sessionKey, "sessionKey");
  if (sessionKey !== undefined) checked.sessionKey = sessionKey;
  const runId = checkId(filter.runId, "runId");
  if (runId !== undefined) checked.runId = runId;
  if (filter.hook !== undefined) {
    const hook: string = filter.hook;
    if (!isHookName(hook) && hook !== UNKNOWN_HOOK)
      throw invalid(
        "hook",
        `unknown hook ${JSON.stringify(hook)}: expected one of ${HOOK_NAMES.join(", ")} (or "unknown" for error records of invalid hook names)`,
      );
    checked.hook = filter.hook;
  }
  if (filter.outcome !== undefined) {
    if (!isAuditOutcome(filter.outcome))
      throw invalid(
        "outcome",
        `unknown outcome ${JSON.stringify(filter.outcome)}: expected one of ${AUDIT_OUTCOMES.join(", ")}`,
      );
    checked.outcome = filter.outcome;
  }
  if (filter.policy !== undefined) {
    if (typeof filter.policy !== "string" || !POLICY_NAME_PATTERN.test(filter.policy))
      throw invalid(
        "policy",
        `invalid policy name ${JSON.stringify(filter.policy)}: policy names are 1-64 of A-Z a-z 0-9 _ -`,
      );
    checked.policy = filter.policy;
  }
  const since = checkDate(filter.since, "since");
  if (since !== undefined) checked.since = since;
  const until = checkDate(filter.until, "until");
  if (until !== undefined) checked.until = until;
  if (since !== undefined && until !== undefined && since > until)
    throw invalid(
      "since",
      `since (${since.toISOString()}) is after until (${until.toISOString()}): nothing can match`,
    );
  if (filter.shadowChanged !== undefined && typeof filter.shadowChanged !== "boolean")
    throw invalid("shadowChanged", "shadowChanged must be a boolean");
  if (filter.shadowChanged === true) {
    if (checked.outcome === "error" || checked.outcome === "late" || checked.outcome === "observed")
      throw invalid(
        "shadowChanged",
        `shadowChanged matches decisions only; outcome "${checked.outcome}" records never match it`,
      );
    checked.shadowChanged = true;
  }
  if (filter.limit !== undefined) {
    if (!Number.isSafeInteger(filter.limit) || filter.limit < 1)
      throw invalid("limit", `limit must be a positive integer, got ${String(filter.limit)}`);
    checked.limit = filter.limit;
  }
  return checked;
}

/** The part of a (checked) filter that becomes the subject filter. */
export function subjectFilter(filter: AuditFilter): AuditSubjectFilter {
  const subject: AuditSubjectFilter = {};
  if (filter.agentId !== undefined) subject.agentId = filter.agentId;
  if (filter.sessionKey !== undefined) subject.sessionKey = filter.sessionKey;
  // "unknown" is a valid hook token of the audit subject (error records), not a HookName.
  if (filter.hook !== undefined) subject.hook = filter.hook as HookName;
  if (filter.outcome !== undefined) subject.kind = filter.outcome;
  return subject;
}

/** The client-side part of a filter: policy and shadowChanged (until and limit end the read). */
export function matchesClientSide(entry: LogEntry, filter: AuditFilter): boolean {
  const { record } = entry;
  if (filter.runId !== undefined && record.context.runId !== filter.runId) return false;
  if (filter.shadowChanged === true) {
    if (record.kind !== "decision" || record.shadow?.changed !== true) return false;
  }
  if (filter.policy !== undefined) {
    if (record.kind === "decision") {
      if (!record.outcomes.some((o) => o.policy === filter.policy)) return false;
    } else if (record.kind === "late") {
      if (record.policy !== filter.policy) return false;
    } else if (record.kind === "observation") {
      // A refusal the SDK or an adapter recorded names the policy that decided it.
      if (record.event.blockedBy !== filter.policy) return false;
    } else {
      return false;
    }
  }
  return true;
}
