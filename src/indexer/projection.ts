/**
 * From a stored log message to index rows: pure, and tolerant. The record schema evolves (fields
 * come and go between versions), so the projection reads only what the columns need, with type
 * guards, and keeps the whole record as json. The subject, written by the coordinator, is the
 * authority for agent, session, hook and outcome.
 */
import type { ParsedAuditSubject } from "../bus/subjects.js";
import { isLocalRefusal } from "../log/observation-outcome.js";
import { scanRecord, type Shape } from "./record-scan.js";

export interface RecordRow {
  seq: number;
  subject: string;
  storedAt: Date;
  kind: string;
  outcome: string;
  agentId: string;
  sessionKey: string;
  runId: string | null;
  hook: string;
  callId: string | null;
  blockedBy: string | null;
  registryRevision: number | null;
  receivedAt: Date | null;
  decidedAt: Date | null;
  latencyMs: number | null;
  shadowChanged: boolean;
  indexError: string | null;
  /** An approval record's `decisionSeq`: the pending decision it settles. */
  decisionSeq: number | null;
  /** The subject hash a sealed record's values are encrypted under (`encrypted.subject`). */
  sealedFor: string | null;
  /**
   * The record as JSON text (NUL characters and lone surrogates replaced: PostgreSQL's JSON
   * functions refuse them), or its stored UTF-8 bytes when they hold neither; null when invalid.
   */
  recordJson: string | Uint8Array | null;
}

export interface PolicyRow {
  seq: number;
  policy: string;
  version: string | null;
  mode: string | null;
  status: string;
  effect: string | null;
  latencyMs: number | null;
}

export interface Projection {
  record: RecordRow;
  policies: PolicyRow[];
}

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Obj)
    : undefined;
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

function positiveInt(value: unknown): number | null {
  return Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : null;
}

function date(value: unknown): Date | null {
  if (typeof value !== "string") return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d;
}

/**
 * PostgreSQL's JSON functions (jsonb, ->>) refuse two things JSON text may hold: \u0000, and a lone UTF-16 surrogate (\ud800 not
 * followed by a low surrogate; JSON.parse accepts it, so an agent can send one in any string).
 * JSON.stringify writes both as escapes and a valid surrogate pair as the character itself, so
 * every such escape it writes is one of these: each becomes U+FFFD. An escaped backslash before
 * `u0000` is text, and left alone.
 */
export function jsonForPg(value: unknown): string {
  return pgSafeJson(JSON.stringify(value));
}

/** The same replacement on JSON text written by JSON.stringify. */
export function pgSafeJson(json: string): string {
  // Most records hold no escape of this kind: skip the regular expression for them.
  if (!json.includes("\\u")) return json;
  return json.replace(/(?<!\\)((?:\\\\)*)\\u(?:0000|d[89a-f][0-9a-f]{2})/g, "$1\\ufffd");
}

function policyRows(seq: number, record: Obj): PolicyRow[] {
  if (record.kind === "late") {
    const policy = str(record.policy);
    if (policy === null) return [];
    return [
      {
        seq,
        policy,
        version: str(record.version),
        mode: null,
        status: "late",
        effect: record.wouldHaveBlocked === true ? "would-have-blocked" : null,
        latencyMs: num(record.latencyMs),
      },
    ];
  }
  if (!Array.isArray(record.outcomes)) return [];
  const rows = new Map<string, PolicyRow>();
  for (const item of record.outcomes) {
    const o = obj(item);
    const policy = str(o?.policy);
    if (o === undefined || policy === null || rows.has(policy)) continue;
    rows.set(policy, {
      seq,
      policy,
      version: str(o.version),
      mode: str(o.mode),
      status: str(o.status) ?? "unknown",
      effect: str(o.effect),
      latencyMs: num(o.latencyMs),
    });
  }
  return [...rows.values()];
}

/** The policy of a refusal the SDK or an adapter recorded (log/observation-outcome.ts). */
function refusedBy(record: Obj): string | null {
  const event = obj(record.event);
  return record.kind === "observation" && isLocalRefusal(str(record.hook) ?? "", event)
    ? str(event?.blockedBy)
    : null;
}

export interface StoredMessage {
  seq: number;
  subject: string;
  storedAt: Date;
  address: ParsedAuditSubject;
}

/**
 * Whether `text`, the JSON the record was parsed from, can be stored as it is: with no `\u`
 * escape it holds neither of the two things PostgreSQL's JSON functions refuse (raw control characters are not JSON,
 * and text decoded from UTF-8 has no lone surrogate), and it is the record's own bytes; spared a
 * JSON.stringify per record, the indexer's share of the CPU drops. Otherwise the record is
 * written again by jsonForPg.
 */
function storableAsIs(text: string | undefined): text is string {
  return text !== undefined && !text.includes("\\u");
}

/** The rows of a decoded record; `text` is the JSON it was parsed from, when it was plain JSON. */
export function projectRecord(message: StoredMessage, decoded: unknown, text?: string): Projection {
  const record = obj(decoded);
  if (record === undefined)
    return invalidProjection(message, "HOOKBUS_BAD_MESSAGE: the record is not a JSON object");
  return projectFields(message, record, storableAsIs(text) ? text : jsonForPg(record));
}

/** What the projection reads of a record (record-scan.ts): the rest is stored, not parsed. */
const READ: Shape = {
  kind: true,
  hook: true,
  context: { runId: true },
  decision: { blockedBy: true },
  shadow: { changed: true },
  receivedAt: true,
  publishedAt: true,
  decidedAt: true,
  latencyMs: true,
  callId: true,
  eventId: true,
  registryRevision: true,
  outcomes: {
    each: { policy: true, version: true, mode: true, status: true, effect: true, latencyMs: true },
  },
  policy: true,
  version: true,
  wouldHaveBlocked: true,
  // An observation's refusal (refusedBy).
  event: { blocked: true, blockSource: true, blockedBy: true },
  decisionSeq: true,
  encrypted: { subject: true },
};

/**
 * The rows of a plain-JSON record from its stored bytes, reading only the fields the columns need
 * (record-scan.ts: the trust boundary); the bytes are stored as they are. Undefined when the
 * record must be decoded in full instead: the scan cannot read it, or it holds a `\u` escape
 * (which may stand for what PostgreSQL's JSON functions refuse). `maxDepth`: the codec's depth bound.
 */
export function projectBytes(
  message: StoredMessage,
  bytes: Uint8Array,
  maxDepth: number,
): Projection | undefined {
  const scanned = scanRecord(bytes, maxDepth, READ);
  if (scanned === undefined || scanned.escapes) return undefined;
  return projectFields(message, scanned.fields, bytes);
}

function projectFields(
  message: StoredMessage,
  record: Obj,
  recordJson: string | Uint8Array,
): Projection {
  const context = obj(record.context) ?? {};
  const decision = obj(record.decision);
  const shadow = obj(record.shadow);
  const encrypted = obj(record.encrypted);
  const receivedAt = date(record.receivedAt) ?? date(record.publishedAt);
  const decidedAt = date(record.decidedAt);
  const latencyMs =
    record.kind === "late"
      ? num(record.latencyMs)
      : receivedAt !== null && decidedAt !== null
        ? decidedAt.getTime() - receivedAt.getTime()
        : null;
  const { address } = message;
  return {
    record: {
      seq: message.seq,
      subject: message.subject,
      storedAt: message.storedAt,
      kind: str(record.kind) ?? "unknown",
      outcome: address.kind,
      agentId: address.agentId,
      sessionKey: address.sessionKey,
      runId: str(context.runId),
      hook: address.hook,
      callId: str(record.callId) ?? str(record.eventId),
      blockedBy: str(decision?.blockedBy) ?? refusedBy(record),
      registryRevision: num(record.registryRevision),
      receivedAt,
      decidedAt,
      latencyMs,
      shadowChanged: shadow?.changed === true,
      indexError: null,
      decisionSeq: record.kind === "approval" ? positiveInt(record.decisionSeq) : null,
      sealedFor: str(encrypted?.subject),
      recordJson,
    },
    policies: policyRows(message.seq, record),
  };
}

/** A record that could not be decoded: indexed as `invalid` with why, so it is counted, not lost. */
export function invalidProjection(message: StoredMessage, why: string): Projection {
  const { address } = message;
  return {
    record: {
      seq: message.seq,
      subject: message.subject,
      storedAt: message.storedAt,
      kind: "invalid",
      outcome: address.kind,
      agentId: address.agentId,
      sessionKey: address.sessionKey,
      runId: null,
      hook: address.hook,
      callId: null,
      blockedBy: null,
      registryRevision: null,
      receivedAt: null,
      decidedAt: null,
      latencyMs: null,
      shadowChanged: false,
      indexError: why.slice(0, 2000),
      decisionSeq: null,
      sealedFor: null,
      recordJson: null,
    },
    policies: [],
  };
}
