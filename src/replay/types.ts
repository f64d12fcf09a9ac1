/** What replay takes and what it yields: one structured result per recorded decision. */
import type { StreamShown } from "./stream-shown.js";
import type { RecordOpener } from "../privacy/record-keys.js";
import type { Logger } from "pino";
import type { Decision, ModifyingHookName } from "../catalog/catalog.js";
import type { LogRecord, RecordedOutcome } from "../log/record.js";
import type { Policy } from "../policy/policy.js";

/**
 * One record to replay: a log entry as `readLog` yields it, an entry of an export file (only
 * `record` is required), or a bare record.
 */
export interface ReplayEntry {
  record: LogRecord;
  seq?: number | undefined;
  subject?: string | undefined;
  /** The subject's tokens (agent, session, ...), as `readLog` decodes them. */
  address?: { agentId: string; sessionKey: string } | undefined;
  storedAt?: Date | undefined;
}

export type ReplayInput = ReplayEntry | LogRecord;

export interface ReplayCandidates {
  /** The loaded policy modules (objects made by `definePolicy`), matched to the registry by name. */
  policies: readonly Policy[];
  /**
   * The candidate registry document (what `hookbus registry apply` takes): which policies handle
   * which hook, with priority, failure mode and mode (`enforce` or `shadow`). Timeouts are
   * ignored in process: a replay must not depend on how fast the machine is.
   */
  registry: unknown;
  /** Handed to policies as `tools.logger`; default silent. */
  logger?: Logger;
  /**
   * Opens records sealed per subject (docs/privacy.md), e.g. a `RecordKeys`. Sealed records whose
   * key was erased, and every sealed record when this is absent, are skipped and counted (`erased`).
   */
  keys?: RecordOpener;
}

export interface ReplayOptions extends ReplayCandidates {
  /** The recorded history, in log order: decision and observation records (others are skipped). */
  records: AsyncIterable<ReplayInput> | Iterable<ReplayInput>;
}

/** One field of the decision that differs between the recording and the replay. */
export interface FieldChange {
  /** A decision field: `outcome`, `blockedBy`, `blockReason`, `params`, `content`, `tools`, ... */
  field: string;
  /** The recorded value; absent when the recorded decision did not set the field. */
  before?: unknown;
  /** The replayed value; absent when the replayed decision does not set the field. */
  after?: unknown;
  /** For people: `allow → block`, `content redacted`, `tools: exec removed`. */
  summary: string;
}

/** A policy's outcome in the replay, in the shape the log records (without latency). */
export type ReplayedOutcome = Omit<RecordedOutcome, "latencyMs">;

export type ReplayStatus = "unchanged" | "changed";

export interface ReplayResult {
  /** Stream sequence of the record, when known. */
  seq?: number;
  callId: string;
  hook: ModifyingHookName;
  agentId: string;
  sessionKey: string;
  /** `changed` when the replayed decision tells the agent something else (`decidedBy` aside). */
  status: ReplayStatus;
  /**
   * An earlier decision of this session changed in the replay, so the agent would have seen
   * something else and this input might never have happened as recorded. Still evaluated.
   */
  counterfactual: boolean;
  recorded: Decision<ModifyingHookName>;
  /** The candidate set's decision; where the log masked or hashed the recorded one, so is this. */
  replayed: Decision<ModifyingHookName>;
  /** Field by field, what changed (empty when unchanged). */
  diff: FieldChange[];
  /** The kind of change, for counting: `allow→block`, `block→allow`, `modify: content`, ... */
  change?: string;
  /** The policies whose outcome differs from the recorded one and that decided a changed field. */
  causes: string[];
  /** One line: `before_tool_call exec: allow → block by \`no-shell\``. */
  summary: string;
  /** Every candidate policy of the hook, in merge order, as replayed. */
  outcomes: ReplayedOutcome[];
  /** The replayed decision with shadow policies enforced too (when the candidate set has any). */
  shadow?: { decision: Decision<ModifyingHookName>; changed: boolean };
  /**
   * Redaction masked the record's inputs (the policies re-decided on the mask), or a field of its
   * decision that cannot be compared (masked, or hashed with a key this process lacks).
   */
  incomplete?: { maskedPaths: string[] };
  /** Caveats: a recorded policy that timed out or had no worker (a failure replay cannot reproduce). */
  notes?: string[];
  /** A streamed answer's end record: what the user was shown, and would be under the candidates. */
  stream?: StreamShown;
}

/** What a replay saw besides decisions. */
export interface ReplayStats {
  decisions: number;
  /** Observation records handed to the observational handlers of candidate policies. */
  observations: number;
  /** Observational handler runs that failed (the live worker would have retried them). */
  observationErrors: number;
  /** Records that are neither decisions nor observations (error and late-verdict records). */
  /** Approval records are never replayed: replay never asks a person (docs/approvals.md). */
  skipped: { error: number; late: number; approval: number; erasure: number; erased: number };
}
