/**
 * A decision record from its parts, pure: the coordinator writes it, replay re-decides into the
 * same outcome shape, so a replayed decision is recorded by the same code as a live one.
 *
 * What a record keeps of a policy's verdict: a valid verdict as it is (bounded by the codec's
 * limits and its hook's schema); one that failed validation as its digest and size only, so a
 * broken or hostile worker cannot fill the log with arbitrary payloads, and the record still
 * matches its schema.
 */
import { createHash } from "node:crypto";
import type { HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { modifyingHooks } from "../catalog/catalog.js";
import { mergeOutcomes, type MergeResult } from "../merge/merge.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import { streamSummaryOf, type StreamSummary } from "./stream-summary.js";
import type {
  DecisionRecord,
  LateVerdictRecord,
  RecordedOutcome,
  VerdictDigest,
} from "./record.js";

export function digestOf(value: unknown): VerdictDigest {
  const text = JSON.stringify(value) ?? "null";
  return {
    sha256: createHash("sha256").update(text).digest("hex"),
    bytes: Buffer.byteLength(text, "utf8"),
  };
}

/** A late verdict is not merged, so it is validated here before it is recorded. */
export function boundedLateVerdict(
  hook: ModifyingHookName,
  verdict: unknown,
): { verdict?: unknown; rejectedVerdict?: VerdictDigest } {
  if (verdict === undefined || verdict === null) return verdict === null ? { verdict } : {};
  const valid = modifyingHooks[hook].verdict.safeParse(verdict).success;
  return valid ? { verdict } : { rejectedVerdict: digestOf(verdict) };
}

/** Each policy's outcome as the record keeps it, in merge order, with its latency (ms, 3 decimals). */
export function recordedOutcomes(
  result: MergeResult<ModifyingHookName>,
  raw: readonly PolicyOutcomeInput[],
): RecordedOutcome[] {
  return outcomesOf(result, raw, true) as RecordedOutcome[];
}

/** As recordedOutcomes, without latencies: replay compares outcomes, and a latency never repeats. */
export function outcomesWithoutLatency(
  result: MergeResult<ModifyingHookName>,
  raw: readonly PolicyOutcomeInput[],
): Omit<RecordedOutcome, "latencyMs">[] {
  return outcomesOf(result, raw, false);
}

function outcomesOf(
  result: MergeResult<ModifyingHookName>,
  raw: readonly PolicyOutcomeInput[],
  withLatency: boolean,
): (Omit<RecordedOutcome, "latencyMs"> & { latencyMs?: number })[] {
  const byPolicy = new Map(raw.map((o) => [o.policy, o]));
  return result.policies.map((evaluation) => {
    const source = byPolicy.get(evaluation.policy);
    const error = evaluation.error ?? source?.error;
    // Field by field, in the record's key order: per policy, per call, and per replayed record
    // (hot path: foundation/hot-path.ts).
    const recorded = { policy: evaluation.policy } as RecordedOutcome;
    if (evaluation.version !== undefined) recorded.version = evaluation.version;
    recorded.priority = evaluation.priority;
    recorded.mode = evaluation.mode;
    recorded.failMode = evaluation.failMode;
    recorded.status = evaluation.status;
    recorded.effect = evaluation.effect;
    const verdict = source?.verdict;
    if (verdict !== undefined) {
      if (evaluation.status === "invalid") recorded.rejectedVerdict = digestOf(verdict);
      else recorded.verdict = verdict;
    }
    if (error !== undefined) recorded.error = { code: error.code, message: error.message };
    if (withLatency) recorded.latencyMs = Math.round((source?.latencyMs ?? 0) * 1000) / 1000;
    return recorded;
  });
}

export interface DecisionParts {
  callId: string;
  hook: ModifyingHookName;
  context: DecisionRecord["context"];
  event: DecisionRecord["event"];
  /** The merge of the outcomes, its decision as the agent is told it. */
  result: MergeResult<ModifyingHookName>;
  outcomes: readonly PolicyOutcomeInput[];
  callDigest: string;
  registryRevision: number;
  /** The emergency stop list revision the call was checked against (absent: none enforced). */
  stopsRevision?: number | undefined;
  /** The call's fact set (src/policy/call-facts.ts); absent for a caller that computed none. */
  facts?: DecisionRecord["facts"];
  receivedAt: Date;
  decidedAt: Date;
  coordinator: string;
}

/** The decision record of one call, before redaction (log/redaction.ts applies the registry's rules). */
export function buildDecisionRecord(parts: DecisionParts): DecisionRecord {
  const { result } = parts;
  return {
    v: 1,
    kind: "decision",
    callId: parts.callId,
    hook: parts.hook,
    context: parts.context,
    event: parts.event,
    outcomes: recordedOutcomes(result, parts.outcomes),
    decision: result.decision,
    ...(parts.facts === undefined ? {} : { facts: parts.facts }),
    ...(result.shadow === undefined ? {} : { shadow: result.shadow }),
    callDigest: parts.callDigest,
    registryRevision: parts.registryRevision,
    ...(parts.stopsRevision === undefined ? {} : { stopsRevision: parts.stopsRevision }),
    ...streamField(parts.hook, parts.event),
    receivedAt: parts.receivedAt.toISOString(),
    decidedAt: parts.decidedAt.toISOString(),
    coordinator: parts.coordinator,
  };
}

/** The record's `stream` summary, for a streamed answer's event only. */
function streamField(
  hook: ModifyingHookName,
  event: DecisionRecord["event"],
): { stream?: StreamSummary } {
  const stream = streamSummaryOf(hook, event);
  return stream === undefined ? {} : { stream };
}

export interface LateVerdictParts {
  callId: string;
  hook: ModifyingHookName;
  context: LateVerdictRecord["context"];
  /** The late outcome as the policy asker built it. */
  outcome: PolicyOutcomeInput;
  timeoutMs: number;
  receivedAt: Date;
  coordinator: string;
}

/**
 * Whether the late outcome alone would have blocked: merged by itself, enforced and fail-open
 * (a late failure is not a block). An empty event, because blocking never depends on it (the
 * event only shapes lists and texts), so the call's event need not be kept for late verdicts.
 */
export function wouldHaveBlocked(hook: ModifyingHookName, outcome: PolicyOutcomeInput): boolean {
  try {
    const alone = mergeOutcomes(hook, {} as HookEvent<typeof hook>, [
      { ...outcome, mode: "enforce", failMode: "fail-open" },
    ]);
    return alone.decision.outcome === "block";
  } catch {
    return false; // a malformed outcome blocks nothing; its verdict is kept as a digest below
  }
}

/** The record of a verdict that came after its call was decided (docs/protocol.md, "late"). */
export function buildLateVerdictRecord(parts: LateVerdictParts): LateVerdictRecord {
  const { outcome, hook } = parts;
  return {
    v: 1,
    kind: "late",
    callId: parts.callId,
    hook,
    context: parts.context,
    policy: outcome.policy,
    ...(outcome.version === undefined ? {} : { version: outcome.version }),
    ...boundedLateVerdict(hook, outcome.verdict),
    ...(outcome.error === undefined ? {} : { error: outcome.error }),
    latencyMs: Math.round((outcome.latencyMs ?? 0) * 1000) / 1000,
    timeoutMs: parts.timeoutMs,
    wouldHaveBlocked: wouldHaveBlocked(hook, outcome),
    receivedAt: parts.receivedAt.toISOString(),
    coordinator: parts.coordinator,
  };
}
