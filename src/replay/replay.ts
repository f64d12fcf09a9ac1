/**
 * Replay: re-decide recorded calls with a candidate policy set and report, record by record,
 * what would change. Like Temporal's replayer it yields one structured result per history item
 * (here, per decision record) instead of failing on the first divergence, so a test suite or a
 * reviewer sees every affected record.
 *
 * Deterministic by construction: records are handled one at a time in log order; policy state
 * lives in a fresh in-memory store per replay, fed by the replayed decision AND observation
 * records, so a replay never reads or writes live state and never touches the network.
 */
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "pino";
import type { Decision, ModifyingHookName, ObservationalHookName } from "../catalog/catalog.js";
import type {
  DecisionRecord,
  LogRecord,
  ObservationRecord,
  RecordedOutcome,
} from "../log/record.js";
import { invokePolicy } from "../policy/invoke.js";
import { loadCallFacts, type CallFacts } from "../policy/call-facts.js";
import { MemorySessionStateStore } from "../policy/state/memory-store.js";
import { buildCandidates, type CandidateSet } from "./candidates.js";
import { diffDecisions } from "./diff.js";
import { reevaluateNow, type Reevaluation } from "./evaluate.js";
import { redactLikeRecord, type Replayed } from "./masking.js";
import { candidatesFor, StreamedAnswers } from "./stream-shown.js";
import type {
  ReplayCandidates,
  ReplayedOutcome,
  ReplayEntry,
  ReplayInput,
  ReplayOptions,
  ReplayResult,
  ReplayStats,
} from "./types.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

function toEntry(input: ReplayInput): ReplayEntry {
  return "record" in input && typeof input.record === "object"
    ? input
    : { record: input as LogRecord };
}

/** A decision as the log would hold it (JSON), so comparisons see what a reader of the log sees. */
function asStored<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

const FAILURES_REPLAY_CANNOT_REPRODUCE = new Set(["timeout", "unavailable"]);

/** Policies whose replayed outcome differs from the recorded one (verdict, status, mode, order). */
function differingPolicies(recorded: RecordedOutcome[], replayed: ReplayedOutcome[]): Set<string> {
  const before = new Map(recorded.map((o) => [o.policy, o]));
  const after = new Map(replayed.map((o) => [o.policy, o]));
  const differ = new Set<string>();
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const a = before.get(name);
    const b = after.get(name);
    if (
      a === undefined ||
      b === undefined ||
      a.status !== b.status ||
      a.effect !== b.effect ||
      a.mode !== b.mode ||
      a.priority !== b.priority ||
      a.failMode !== b.failMode ||
      !isDeepStrictEqual(a.verdict, b.verdict)
    ) {
      differ.add(name);
    }
  }
  return differ;
}

/** Of the policies that now answer differently, those that decided a field that changed. */
function causesOf(
  record: DecisionRecord,
  replayed: Record<string, unknown>,
  outcomes: ReplayedOutcome[],
  changedFields: string[],
): string[] {
  const differ = differingPolicies(record.outcomes, asStored(outcomes));
  const deciders = new Set<string>();
  for (const decision of [record.decision, replayed]) {
    const decidedBy = (decision.decidedBy ?? {}) as Record<string, string[]>;
    if (typeof decision.blockedBy === "string") deciders.add(decision.blockedBy);
    for (const field of [...changedFields, "block"]) {
      for (const name of decidedBy[field] ?? []) deciders.add(name);
    }
  }
  const causes = [...differ].filter((name) => deciders.has(name));
  return (causes.length > 0 ? causes : [...differ]).sort();
}

/** Caveats on recorded failures that an in-process policy cannot reproduce; undefined when none. */
function notesOn(outcomes: readonly RecordedOutcome[]): string[] | undefined {
  let notes: string[] | undefined;
  for (const o of outcomes) {
    if (!FAILURES_REPLAY_CANNOT_REPRODUCE.has(o.status)) continue;
    (notes ??= []).push(
      `recorded: policy "${o.policy}" ${o.status === "timeout" ? "timed out" : "had no live worker"} (${o.effect}); in process it answers`,
    );
  }
  return notes;
}

/** The session a record belongs to: its subject's tokens when known (redaction never touches them). */
function sessionOf(entry: ReplayEntry): { agentId: string; sessionKey: string } {
  const { context } = entry.record;
  const text = (value: unknown) => (typeof value === "string" ? value : "(unknown)");
  return {
    agentId: entry.address?.agentId ?? text(context.agentId),
    sessionKey: entry.address?.sessionKey ?? text(context.sessionKey),
  };
}

export class Replayer {
  readonly candidates: CandidateSet;
  readonly stats: ReplayStats = {
    decisions: 0,
    observations: 0,
    observationErrors: 0,
    skipped: { error: 0, late: 0, approval: 0, erasure: 0, erased: 0 },
  };
  private readonly logger: Logger | undefined;
  private readonly keys: ReplayCandidates["keys"];
  private readonly streamed = new StreamedAnswers();
  private used = false;

  /** Checks the candidate set at once: a registry policy with no module is HOOKBUS_INVALID_POLICY. */
  constructor(options: ReplayCandidates) {
    this.candidates = buildCandidates(options.policies, options.registry);
    this.logger = options.logger;
    this.keys = options.keys;
  }

  /** Names of loaded policies the registry does not list (unused). */
  get unused(): string[] {
    return this.candidates.unused;
  }

  /** One result per decision record, in input order. A Replayer replays one history, once. */
  async *run(
    records: AsyncIterable<ReplayInput> | Iterable<ReplayInput>,
  ): AsyncGenerator<ReplayResult> {
    if (this.used) throw new Error("a Replayer runs once: create another for another replay");
    this.used = true;
    await loadCallFacts(); // every decision's facts parse its shell commands, as live
    const state = new MemorySessionStateStore();
    const diverged = new Set<string>();
    for await (const input of records) {
      const entry = await this.opened(toEntry(input));
      if (entry === undefined) continue;
      const { record } = entry;
      switch (record.kind) {
        case "observation":
          await this.observe(record, state);
          await this.candidates.session.observed(record);
          break;
        case "decision": {
          const session = sessionOf(entry);
          const key = JSON.stringify([session.agentId, session.sessionKey]);
          // The facts as the coordinator computed them, from the recorded event (docs/facts.md):
          // once, for the policies and for what the session learns.
          const facts = this.candidates.factsOf(record);
          const decided = this.decide(entry, record, facts, session, state, diverged.has(key));
          // Awaited only when a policy answered with a promise: most records decide at once.
          const result = isPromise(decided) ? await decided : decided;
          const shown = this.streamed.note(key, record, result.replayed);
          if (shown !== undefined) result.stream = shown;
          // What the coordinator would have learnt from this merged decision (docs/replay.md).
          await this.candidates.session.decided(record, result.replayed, facts);
          if (result.status === "changed") diverged.add(key);
          yield result;
          break;
        }
        case "approval":
          // Not re-decided (a person answered), but the session learns the settlement.
          await this.candidates.session.settled(record.context, record.resolution);
          this.stats.skipped.approval++;
          break;
        default:
          this.stats.skipped[record.kind]++;
      }
    }
  }

  /** The entry with its sealed fields opened; undefined (counted) when they cannot be. */
  private async opened(entry: ReplayEntry): Promise<ReplayEntry | undefined> {
    if (entry.record.encrypted === undefined) return entry;
    const opened = await this.keys?.open(entry.record);
    if (opened === undefined || opened.failure !== undefined) {
      this.stats.skipped.erased++;
      return undefined;
    }
    return { ...entry, record: opened.record };
  }

  private async observe(record: ObservationRecord, state: MemorySessionStateStore): Promise<void> {
    const observers = this.candidates.observers(record.hook as ObservationalHookName);
    if (observers.length === 0) return;
    this.stats.observations++;
    // Sequentially, in registry order: observation handlers of different policies share nothing,
    // but a fixed order keeps the replay's logs (and any handler side effects) reproducible.
    for (const policy of observers) {
      const answer = await invokePolicy(
        policy,
        record.hook as ObservationalHookName,
        record.event,
        record.context,
        {
          callId: record.eventId,
          state,
          ...(this.logger === undefined ? {} : { logger: this.logger }),
        },
      );
      if (answer.status !== "ok") this.stats.observationErrors++;
    }
  }

  private decide(
    entry: ReplayEntry,
    record: DecisionRecord,
    facts: CallFacts,
    session: { agentId: string; sessionKey: string },
    state: MemorySessionStateStore,
    counterfactual: boolean,
  ): MaybePromise<ReplayResult> {
    this.stats.decisions++;
    this.candidates.session.at(Date.parse(record.receivedAt));
    const hook = record.hook as ModifyingHookName;
    const reevaluation = reevaluateNow(
      record,
      candidatesFor(record, this.candidates.forHook(hook)),
      state,
      this.logger,
      facts,
    );
    return isPromise(reevaluation)
      ? reevaluation.then((settled) => resultOf(entry, record, session, counterfactual, settled))
      : resultOf(entry, record, session, counterfactual, reevaluation);
  }
}

/** The replay's result for one decision record, from its re-decision. */
function resultOf(
  entry: ReplayEntry,
  record: DecisionRecord,
  session: { agentId: string; sessionKey: string },
  counterfactual: boolean,
  { result, outcomes }: Reevaluation,
): ReplayResult {
  const hook = record.hook as ModifyingHookName;
  let replay: Replayed = {
    decision: result.decision,
    outcomes,
    shadow: result.shadow,
  };
  let masked: string[] = [];
  if (record.redacted !== undefined && record.redacted.length > 0) {
    ({ replayed: replay, incomplete: masked } = redactLikeRecord(record, replay));
  }
  let replayed = replay.decision;
  let compared = diffDecisions(hook, record.event, record.decision, replayed);
  if (compared.diff.length > 0) {
    // Compare what the log would hold (JSON: no undefined-valued keys), not the raw object.
    // Only on a difference: most records are unchanged, and the round trip costs.
    replayed = asStored(replayed);
    compared = diffDecisions(hook, record.event, record.decision, replayed);
  }
  const { diff, change, summary } = compared;
  const changed = diff.length > 0;
  // Built field by field in the documented order (hot path: foundation/hot-path.ts).
  const out: Partial<ReplayResult> = {};
  if (entry.seq !== undefined) out.seq = entry.seq;
  out.callId = record.callId;
  out.hook = hook;
  out.agentId = session.agentId;
  out.sessionKey = session.sessionKey;
  out.status = changed ? "changed" : "unchanged";
  out.counterfactual = counterfactual;
  out.recorded = record.decision as Decision<ModifyingHookName>;
  out.replayed = replayed as Decision<ModifyingHookName>;
  out.diff = diff;
  if (change !== undefined) out.change = change;
  out.causes = changed
    ? causesOf(
        record,
        replayed,
        replay.outcomes,
        diff.map((d) => d.field),
      )
    : [];
  out.summary = summary;
  out.outcomes = replay.outcomes;
  if (replay.shadow !== undefined) {
    out.shadow = asStored(replay.shadow) as ReplayResult["shadow"] & object;
  }
  if (masked.length > 0) out.incomplete = { maskedPaths: masked };
  const notes = notesOn(record.outcomes);
  if (notes !== undefined) out.notes = notes;
  return out as ReplayResult;
}

/**
 * Replay recorded records against a candidate policy set: one result per decision record.
 * Throws HOOKBUS_INVALID_POLICY (at the first `next()`) when the registry names a policy that
 * no loaded module defines.
 */
export function replay(options: ReplayOptions): AsyncGenerator<ReplayResult> {
  const { records, ...candidates } = options;
  try {
    // The Replayer's own generator, not one that delegates to it: one async step less per result.
    return new Replayer(candidates).run(records);
  } catch (error) {
    return refused(error);
  }
}

/** A replay that fails at its first step, as a generator does, with the candidate set's error. */
async function* refused(error: unknown): AsyncGenerator<ReplayResult> {
  const failing: AsyncIterator<ReplayResult> = {
    next: () => Promise.reject(error instanceof Error ? error : new Error(String(error))),
  };
  yield* { [Symbol.asyncIterator]: () => failing };
}
