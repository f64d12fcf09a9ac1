/**
 * The pure part of the flow: an answer or the clock moves an entry forward, and a settled entry
 * becomes the decision the agent follows. No I/O: src/approvals/service.ts does the
 * compare-and-set writes around these.
 */
import type { Decision } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { ApprovalRecord } from "../log/record.js";
import { EMERGENCY_STOP_POLICY, stopReason, type Stop } from "../registry/stops.js";
import type { ApprovalAnswer, ApprovalEntry, Settlement } from "./entry.js";

/** The group token of an answer that names no group (any approver may use it). */
export const NO_GROUP = "-";

/** What an approver sends (docs/approvals.md); the approver and group come from the subject. */
export interface IncomingAnswer {
  approver: string;
  group: string;
  decision: "approve" | "deny";
  reason?: string | undefined;
  from?: string | undefined;
  callDigest?: string | undefined;
}

function assertPending(entry: ApprovalEntry): void {
  if (entry.settlement !== undefined)
    throw new HookbusError(
      "HOOKBUS_APPROVAL_SETTLED",
      `approval ${entry.id} was already settled: ${entry.settlement.resolution}`,
      { id: entry.id, resolution: entry.settlement.resolution },
    );
}

/**
 * The entry after one answer. A deny settles at once; an approve settles when every group the
 * request names has approved (a request without groups: the first approve). An answer past the
 * deadline does not count: the timeout settles the entry instead (see `expire`).
 */
export function applyAnswer(
  entry: ApprovalEntry,
  answer: IncomingAnswer,
  now: Date,
): ApprovalEntry {
  assertPending(entry);
  if (answer.callDigest !== undefined && answer.callDigest !== entry.callDigest)
    throw new HookbusError(
      "HOOKBUS_APPROVAL_DIGEST_MISMATCH",
      `approval ${entry.id} is for call digest ${entry.callDigest.slice(0, 12)}…, the answer names ${answer.callDigest.slice(0, 12)}…`,
      { id: entry.id },
    );
  const groups = entry.request.approvers;
  if (groups.length > 0 && !groups.includes(answer.group))
    throw new HookbusError(
      "HOOKBUS_APPROVAL_FORBIDDEN",
      `approval ${entry.id} needs an answer for group ${groups.join(" and ")}; this one is for ${answer.group === NO_GROUP ? "no group" : answer.group}`,
      { id: entry.id, groups },
    );
  const recorded: ApprovalAnswer = {
    approver: answer.approver,
    group: answer.group,
    decision: answer.decision,
    ...(answer.reason === undefined ? {} : { reason: answer.reason }),
    ...(answer.from === undefined ? {} : { from: answer.from }),
    at: now.toISOString(),
  };
  const answers = [...entry.answers.filter((a) => a.group !== answer.group), recorded];
  const next = { ...entry, answers };
  const at = now.toISOString();
  if (answer.decision === "deny") {
    return settle(next, {
      resolution: "denied",
      effect: "block",
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      resolvedAt: at,
    });
  }
  const approved = new Set(answers.filter((a) => a.decision === "approve").map((a) => a.group));
  if (groups.every((g) => approved.has(g))) {
    return settle(next, {
      resolution: "approved",
      effect: "allow",
      ...(answer.reason === undefined ? {} : { reason: answer.reason }),
      resolvedAt: at,
    });
  }
  return next;
}

/** Whether the request's wait is over at `now`. */
export function isExpired(entry: ApprovalEntry, now: Date): boolean {
  return now.getTime() >= Date.parse(entry.expiresAt);
}

/** The entry settled by its timeout: timeoutBehavior applies. Undefined when not yet due. */
export function expire(entry: ApprovalEntry, now: Date): ApprovalEntry | undefined {
  if (entry.settlement !== undefined || !isExpired(entry, now)) return undefined;
  const behaviour = entry.request.timeoutBehavior;
  return settle(entry, {
    resolution: "timed-out",
    effect: behaviour === "allow" ? "allow" : "block",
    reason: `no answer within ${entry.request.timeoutMs} ms: timeoutBehavior ${behaviour}`,
    resolvedAt: now.toISOString(),
  });
}

/** Why an erased request never allows (docs/privacy.md, "Approvals"). */
export const ERASED_APPROVAL_REASON =
  "the session's data was erased while its approval was pending (HOOKBUS_SESSION_ERASED): the call cannot be allowed";

/**
 * A request whose texts were erased, settled as a block whatever was or will be answered: the
 * params the approval was for can no longer be read, so nothing may run with them. A pending
 * request is settled at once as `erased` (no person denied it: the record says so, and names the
 * erased subject); a settlement to allow not yet recorded becomes a block that names it too.
 * Anything else is returned as it is.
 */
export function blockedAsErased(entry: ApprovalEntry, now: Date): ApprovalEntry {
  const s = entry.settlement;
  const erasedSubject = entry.subject === undefined ? {} : { erasedSubject: entry.subject };
  if (s === undefined)
    return settle(entry, {
      resolution: "erased",
      effect: "block",
      reason: ERASED_APPROVAL_REASON,
      resolvedAt: now.toISOString(),
      ...erasedSubject,
    });
  if (s.effect !== "allow" || entry.recordSeq !== undefined) return entry;
  return settle(entry, { ...s, effect: "block", reason: ERASED_APPROVAL_REASON, ...erasedSubject });
}

/** Who settled it, as the decision's `by` says: nobody for a timeout or an erasure. */
function settlers(entry: ApprovalEntry, s: Settlement): string[] {
  if (s.resolution === "timed-out" || s.resolution === "erased") return [];
  return entry.answers.map((a) => a.approver);
}

/** What the agent follows for an entry read as erased: never an allow (see blockedAsErased). */
export function erasedDecision(entry: ApprovalEntry): Decision<"before_tool_call"> {
  const decision = settledDecision(entry);
  if (decision.outcome === "block") return decision;
  return {
    outcome: "block",
    blockReason: ERASED_APPROVAL_REASON,
    blockedBy: "approval",
    decidedBy: { block: ["approval"] },
    ...(decision.resolvedApproval === undefined
      ? {}
      : { resolvedApproval: decision.resolvedApproval }),
  };
}

function settle(entry: ApprovalEntry, settlement: Settlement): ApprovalEntry {
  return { ...entry, settlement };
}

/**
 * A settlement that would let the call proceed, checked against the emergency stop list at
 * `revision` (issue 31, item 2): with `stop` (the stop of its agent or tool in force there) it
 * blocks instead, and says which stop; without, it allows and says which revision it was checked
 * against. A block needs no check and is returned as it is.
 */
export function checkedAgainstStops(
  entry: ApprovalEntry,
  revision: number,
  stop: Stop | undefined,
): ApprovalEntry {
  const s = entry.settlement;
  if (s === undefined || s.effect !== "allow") return entry;
  if (stop === undefined) return settle(entry, { ...s, stopsRevision: revision });
  const { kind, name, by, at, reason } = stop;
  return settle(entry, {
    ...s,
    effect: "block",
    stopsRevision: revision,
    stop: { kind, name, by, at, reason },
  });
}

/** The log record of a settled entry: derived from the entry alone, so any writer writes the same. */
export function approvalRecord(entry: ApprovalEntry, coordinator: string): ApprovalRecord {
  const s = entry.settlement;
  if (s === undefined) throw new RangeError(`approval ${entry.id} is not settled`);
  return {
    v: 1,
    kind: "approval",
    approvalId: entry.id,
    callId: entry.callId,
    hook: entry.hook,
    context: {
      agentId: entry.agentId,
      sessionKey: entry.sessionKey,
      ...(entry.runId === undefined ? {} : { runId: entry.runId }),
    },
    callDigest: entry.callDigest,
    decisionSeq: entry.decisionSeq,
    resolution: s.resolution,
    effect: s.effect,
    answers: s.resolution === "timed-out" ? [] : entry.answers,
    ...(s.reason === undefined ? {} : { reason: s.reason }),
    requestedAt: entry.requestedAt,
    expiresAt: entry.expiresAt,
    resolvedAt: s.resolvedAt,
    ...(s.stopsRevision === undefined ? {} : { stopsRevision: s.stopsRevision }),
    ...(s.stop === undefined ? {} : { stop: s.stop }),
    ...(s.erasedSubject === undefined ? {} : { erasedSubject: s.erasedSubject }),
    coordinator,
  };
}

/**
 * What the agent does once the entry is settled: the pending decision with its params (the
 * approval is for them), or a block that says who denied and why, or what the timeout did.
 */
export function settledDecision(entry: ApprovalEntry): Decision<"before_tool_call"> {
  const s = entry.settlement;
  if (s === undefined) throw new RangeError(`approval ${entry.id} is not settled`);
  const by = settlers(entry, s);
  const resolvedApproval = {
    id: entry.id,
    resolution: s.resolution,
    by,
    ...(s.reason === undefined ? {} : { reason: s.reason }),
    ...(entry.recordSeq === undefined ? {} : { recordSeq: entry.recordSeq }),
  };
  const pending = entry.decision;
  const decidedBy = { ...(pending.decidedBy as Record<string, string[]>) };
  delete decidedBy.requireApproval;
  if (s.stop !== undefined) {
    const what =
      s.resolution === "timed-out" ? "timed out to allow" : `approved by ${by.join(", ")}`;
    return {
      outcome: "block",
      blockReason: `${stopReason(s.stop)} (the approval, ${what}, settled after the stop)`,
      blockedBy: EMERGENCY_STOP_POLICY,
      decidedBy: { block: [EMERGENCY_STOP_POLICY] },
      resolvedApproval,
    };
  }
  if (s.effect === "block") {
    const reason =
      s.resolution === "denied"
        ? `approval denied${by.length === 0 ? "" : ` by ${by.join(", ")}`}${s.reason === undefined ? "" : `: ${s.reason}`}`
        : s.resolution === "timed-out"
          ? `approval timed out (${s.reason ?? "no answer"})`
          : s.resolution === "erased"
            ? `approval settled by erasure: ${s.reason ?? ERASED_APPROVAL_REASON}`
            : `approval ${s.resolution}, yet blocked: ${s.reason ?? "no reason"}`;
    return {
      outcome: "block",
      blockReason: reason,
      blockedBy: "approval",
      decidedBy: { block: ["approval"] },
      resolvedApproval,
    };
  }
  const params = pending.params as Record<string, unknown> | undefined;
  return {
    outcome: params === undefined ? "allow" : "modify",
    ...(params === undefined ? {} : { params }),
    decidedBy,
    resolvedApproval,
  };
}
