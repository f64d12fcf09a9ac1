/**
 * What the log holds: one record per interception. The record is the source of truth for audit
 * and replay, so it keeps the full input, every policy's outcome and the decision.
 */
import { z } from "zod";
import {
  ActionFactsWire,
  HookNameSchema,
  ModifyingHookNameSchema,
  WireError,
} from "../bus/envelope.js";
import { FailMode, PolicyMode, PolicyStatus } from "../merge/outcome.js";
import { StreamSummary } from "./stream-summary.js";

export const RECORD_VERSION = 1;

/** A verdict that failed its schema is kept as its digest and size: bounded, and schema-valid. */
export const VerdictDigest = z
  .strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.int().min(0).describe("Size of the verdict's JSON text."),
  })
  .meta({ id: "VerdictDigest" });

export const RecordedOutcome = z
  .strictObject({
    policy: z.string(),
    version: z.string().optional(),
    priority: z.number(),
    mode: PolicyMode,
    failMode: FailMode,
    status: PolicyStatus.describe(
      "After validation: an answered verdict that failed its schema is `invalid`.",
    ),
    effect: z.enum(["applied", "no-opinion", "failed-closed", "failed-open"]),
    verdict: z.unknown().optional(),
    rejectedVerdict: VerdictDigest.optional().describe(
      "Instead of `verdict` when it failed validation: its digest and size, not the payload.",
    ),
    error: WireError.optional(),
    latencyMs: z.number().min(0),
  })
  .meta({ id: "RecordedOutcome" });

/** Tamper evidence: each record links to the previous record of its session (agent + session). */
export const ChainLink = z
  .strictObject({
    index: z.int().min(1).describe("1 for the session's first record, then one more per record."),
    prev: z.string().nullable().describe("The previous record's hash; null for index 1."),
    hash: z
      .string()
      .describe(
        "sha256 (hex) of this record's canonical JSON with `chain.hash` left out (see docs/tamper-evidence.md).",
      ),
  })
  .meta({ id: "ChainLink" });

/** What the operator's redaction rules changed before the record was written. */
export const RedactedPath = z
  .strictObject({
    path: z.string().describe("A JSON pointer into the record, e.g. /event/content."),
    action: z.enum(["mask", "hash"]),
  })
  .meta({ id: "RedactedPath" });

/**
 * What a sealed field holds in place of its value (src/privacy/record-cipher.ts): "[encrypted]"
 * as stored, "[erased]" once its key is gone. Fields typed as objects accept it too.
 */
export const SealedField = z.enum(["[encrypted]", "[erased]"]).meta({ id: "SealedField" });

/** Personal fields sealed with the subject's data key (docs/privacy.md); each place holds "[encrypted]". */
export const EncryptedContent = z
  .strictObject({
    alg: z.literal("A256GCM"),
    subject: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe(
        "sha256 (hex) of the data subject (`session:<sessionKey>` or `subject:<id>`): which data key.",
      ),
    kid: z
      .string()
      .regex(/^[0-9a-f]{16}$/)
      .describe("Which generation of the subject's data key."),
    paths: z
      .array(z.string())
      .max(10_000)
      .describe("JSON pointers of the places sealed, in the order of the plaintext array."),
    iv: z.string().optional().describe("base64 of the 12-byte GCM nonce (absent once scrubbed)."),
    tag: z.string().optional().describe("base64 of the GCM tag (absent once scrubbed)."),
    ct: z
      .string()
      .optional()
      .describe(
        "base64 of the ciphertext of the JSON array of the sealed values (absent once scrubbed).",
      ),
  })
  .meta({ id: "EncryptedContent" });

const base = {
  v: z.literal(RECORD_VERSION),
  context: z.record(z.string(), z.unknown()),
  coordinator: z.string().optional().describe("Which process wrote the record."),
  chain: ChainLink.optional(),
  redacted: z
    .array(RedactedPath)
    .optional()
    .describe("Paths masked or hashed before the record was written."),
  encrypted: EncryptedContent.optional().describe(
    "Present when the namespace encrypts personal fields: their ciphertext (docs/privacy.md).",
  ),
  callDigest: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe(
      "sha256 of the canonical JSON of { hook, context, event } as received: a duplicate of this record's id is a retry only with the same digest (also the Hookbus-Call-Digest header).",
    ),
};

/** A call the coordinator decided. */
export const DecisionRecord = z.strictObject({
  ...base,
  kind: z.literal("decision"),
  callId: z.string(),
  hook: ModifyingHookNameSchema,
  event: z.record(z.string(), z.unknown()),
  outcomes: z.array(RecordedOutcome).describe("Every policy asked, in merge order."),
  decision: z.record(z.string(), z.unknown()),
  facts: z
    .union([ActionFactsWire, SealedField])
    .optional()
    .describe(
      "What the call does, as the coordinator computed it once and handed it to the Cedar sets and workers that read it (docs/facts.md). Absent when nothing read the facts for the decision (replay and `policy test` compute them from the event). When a redaction rule changed the event or context, computed again from the redacted event, so no redacted text survives in it (docs/audit.md).",
    ),
  shadow: z
    .strictObject({ decision: z.record(z.string(), z.unknown()), changed: z.boolean() })
    .optional()
    .describe(
      "The decision with shadow policies enforced too (present when any shadow policy was asked).",
    ),
  registryRevision: z.int().min(0),
  stopsRevision: z
    .int()
    .min(0)
    .optional()
    .describe(
      "The emergency stop list revision the call was checked against: a call decided before a stop keeps its decision, and this says it predates the stop.",
    ),
  stream: StreamSummary.optional().describe(
    "A streamed answer's before_response_emit: which window, or its end with what was shown and where a cut happened (docs/audit.md).",
  ),
  receivedAt: z.iso.datetime(),
  decidedAt: z.iso.datetime(),
});

/** A call the coordinator could not decide (bad input, internal failure). The agent got this error. */
export const ErrorRecord = z.strictObject({
  ...base,
  kind: z.literal("error"),
  callId: z.string(),
  hook: z.string().describe("As sent; may not be a known hook."),
  event: z.unknown().optional(),
  error: WireError,
  registryRevision: z.int().min(0),
  receivedAt: z.iso.datetime(),
});

/** A verdict that arrived after its deadline, linked to the call by `callId`. */
export const LateVerdictRecord = z.strictObject({
  ...base,
  kind: z.literal("late"),
  callId: z.string(),
  hook: ModifyingHookNameSchema,
  policy: z.string(),
  version: z.string().optional(),
  verdict: z.unknown().optional(),
  rejectedVerdict: VerdictDigest.optional().describe(
    "Instead of `verdict` when it failed validation: its digest and size, not the payload.",
  ),
  error: WireError.optional(),
  latencyMs: z.number().min(0),
  timeoutMs: z.number().min(0),
  wouldHaveBlocked: z
    .boolean()
    .describe("The late verdict blocks: had it been on time, the call would have been blocked."),
  receivedAt: z.iso.datetime(),
});

/** An observational hook's event, published by the agent. */
export const ObservationRecord = z.strictObject({
  ...base,
  kind: z.literal("observation"),
  eventId: z.string(),
  hook: HookNameSchema,
  event: z.record(z.string(), z.unknown()),
  publishedAt: z.iso.datetime(),
});

/** An emergency stop as a record names it (registry/stops.ts keeps the list). */
export const RecordedStop = z.strictObject({
  kind: z.enum(["agent", "tool"]),
  name: z.string(),
  by: z.string(),
  at: z.iso.datetime(),
  reason: z.string(),
});

/**
 * A request settled by erasure (resolution `erased`): the data subject whose key was erased, as
 * the erasure record's `subject` says it, so the audit trail names the erasure, not an approver.
 */
export const erasureSettlementFields = {
  erasedSubject: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional()
    .describe(
      "sha256 of the erased data subject (the erasure record's `subject`) when the erasure settled or blocked the request.",
    ),
};

/** What the settlement of an approval says of the emergency stop list it was checked against. */
export const stopCheckFields = {
  stopsRevision: z
    .int()
    .min(0)
    .optional()
    .describe(
      "The emergency stop list revision a settlement that would allow was checked against (absent for a block: nothing to check).",
    ),
  stop: RecordedStop.optional().describe(
    "The stop in force at that revision that blocked what the settlement would have allowed (effect `block`).",
  ),
};

/**
 * How a pending approval was settled: its own record, linked to the decision by `callId`,
 * `decisionSeq` and `callDigest` (docs/approvals.md). Exactly one per request.
 */
export const ApprovalRecord = z.strictObject({
  ...base,
  kind: z.literal("approval"),
  approvalId: z.string(),
  callId: z.string(),
  hook: ModifyingHookNameSchema,
  decisionSeq: z.int().min(1).describe("The log sequence of the pending_approval decision."),
  resolution: z
    .enum(["approved", "denied", "timed-out", "erased"])
    .describe(
      "`erased`: the call's data subject was erased while the request was pending; no person denied it.",
    ),
  effect: z
    .enum(["allow", "block"])
    .describe("What the agent was told: timeoutBehavior applied, and an emergency stop in force."),
  answers: z
    .array(
      z.strictObject({
        approver: z.string().describe("The approver's name, proven by the answer subject."),
        group: z.string().describe("The group answered for, or `-`."),
        decision: z.enum(["approve", "deny"]),
        reason: z.string().optional(),
        from: z.string().optional().describe("Where the answer came from (cli, slack, ...)."),
        at: z.iso.datetime(),
      }),
    )
    .describe("Every answer that counted, in order; empty for a timeout."),
  reason: z.string().optional(),
  requestedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime(),
  resolvedAt: z.iso.datetime(),
  ...stopCheckFields,
  ...erasureSettlementFields,
});

/**
 * A subject's data keys were erased (`hookbus erase`, or a retention rule): who, what, when and
 * why. Filed under the `_erasure` agent and session tokens (`<ns>.audit._erasure._erasure.unknown.erasure`).
 */
export const ErasureRecord = z.strictObject({
  ...base,
  kind: z.literal("erasure"),
  hook: z.literal("unknown"),
  erasureId: z.string(),
  subject: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .describe("The digest records name the erased subject by (their `encrypted.subject`)."),
  target: z.enum(["session", "subject"]).describe("What was named: a session key or a user id."),
  by: z.string().describe("Who erased: the privacy user's name, or `retention:<rule>`."),
  reason: z.string(),
  keyPurged: z.boolean().describe("Whether a data key was there to purge."),
  rowsScrubbed: z.int().min(0).optional().describe("Index rows scrubbed to their clear fields."),
  erasedAt: z.iso.datetime(),
});

export const LogRecord = z
  .discriminatedUnion("kind", [
    DecisionRecord,
    ErrorRecord,
    LateVerdictRecord,
    ObservationRecord,
    ApprovalRecord,
    ErasureRecord,
  ])
  .meta({ id: "LogRecord" });

export type RecordedOutcome = z.infer<typeof RecordedOutcome>;
export type VerdictDigest = z.infer<typeof VerdictDigest>;
export type DecisionRecord = z.infer<typeof DecisionRecord>;
export type ErrorRecord = z.infer<typeof ErrorRecord>;
export type LateVerdictRecord = z.infer<typeof LateVerdictRecord>;
export type ObservationRecord = z.infer<typeof ObservationRecord>;
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;
export type ErasureRecord = z.infer<typeof ErasureRecord>;
export type LogRecord = z.infer<typeof LogRecord>;
export type ChainLink = z.infer<typeof ChainLink>;
export type RedactedPath = z.infer<typeof RedactedPath>;
export type EncryptedContent = z.infer<typeof EncryptedContent>;
