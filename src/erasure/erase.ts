/**
 * `hookbus erase` as a library call (docs/privacy.md): erase one data subject by crypto-shredding.
 * In order, each step safe to repeat:
 *  1. purge the subject's data key (securely deleted from the KV stream): from here on no one
 *     can read the subject's sealed fields, in the log, its blobs or any copy of them;
 *  2. scrub the index rows of the subject's records to their clear fields;
 *  3. append an erasure record to the log (who, what, when, why), signed with the privacy
 *     user's key when one is given, so `audit verify` under the trusted keys still passes.
 * The log's records are not touched: their chain and signatures cover the ciphertext.
 *
 * A user id (`--subject`) erased with an index erases the sessions the index recorded under it
 * too, each with its own erasure record: session state follows the session's key, not the user's
 * (docs/privacy.md, "Session state"), so this is what makes that state unreadable.
 */
import { nuid } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { pino } from "pino";
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import type { ErasureRecord } from "../log/record.js";
import type { RecordSigningKey } from "../log/sign/keys.js";
import { purgeDataKey } from "../privacy/data-keys.js";
import { subjectDigest } from "../privacy/record-cipher.js";
import { checkSubjectId } from "../privacy/subject.js";
import { scrubErasedRows, sessionsSealedFor } from "../audit/pg/scrub.js";
import type { PgPool } from "../audit/pg/pool.js";
import { LogWriter } from "../coordinator/log-writer.js";
import { RecordSigner } from "../coordinator/record-signer.js";

/** The agent token erasure records are filed under (their session token is the erasure id). */
export const ERASURE_AGENT = "_erasure";
export const MAX_REASON_CHARS = 1000;
export const MAX_SESSION_KEY_CHARS = 512;
/** Sessions a subject's erasure erases with it; past this, erase them by `--session`. */
export const MAX_SUBJECT_SESSIONS = 10_000;
/** How long the erasure record may take to store. */
const APPEND_MS = 10_000;

export interface EraseRequest {
  /** A session key (its records, sealed under the session), or a user id named as `subject`. */
  target: "session" | "subject";
  id: string;
  reason: string;
  /** Who erases: the privacy user's name, or `retention:<rule>`. */
  by: string;
}

export interface EraseOptions {
  bus: Bus;
  /** The index to scrub; absent: no index rows are touched (rowsScrubbed is absent). */
  index?: PgPool;
  /** Signs the erasure record (issued by `hookbus auth` to the privacy user). */
  signingKey?: RecordSigningKey;
  logger?: Logger;
}

export interface Erasure {
  record: ErasureRecord;
  /** The erasure record's log sequence. */
  seq: number;
  /** A subject erased with an index: the erasures of the sessions recorded under it. */
  sessions?: Erasure[];
}

function invalid(message: string, argument: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_ARGUMENT", message, { argument });
}

/** The request checked: ids within their limits, a reason given. */
export function checkEraseRequest(request: EraseRequest): EraseRequest {
  if (request.target === "subject") checkSubjectId(request.id);
  else if (request.id.length === 0 || request.id.length > MAX_SESSION_KEY_CHARS)
    throw invalid(`a session key is 1 to ${MAX_SESSION_KEY_CHARS} characters`, "session");
  const reason = request.reason.trim();
  if (reason.length === 0 || reason.length > MAX_REASON_CHARS)
    throw invalid(`an erasure needs a reason of 1 to ${MAX_REASON_CHARS} characters`, "reason");
  return { ...request, reason };
}

export async function eraseSubject(request: EraseRequest, options: EraseOptions): Promise<Erasure> {
  const checked = checkEraseRequest(request);
  const subject = subjectDigest(`${checked.target}:${checked.id}`);
  if (checked.target === "session" || options.index === undefined)
    return eraseDigest({ ...checked, subject }, options);
  // Read before the scrub below forgets which rows were the subject's.
  const sessions = await sessionsSealedFor(
    options.index,
    options.bus.subjects.namespace,
    subject,
    MAX_SUBJECT_SESSIONS,
  );
  if (sessions.length > MAX_SUBJECT_SESSIONS)
    throw new HookbusError(
      "HOOKBUS_LIMIT_EXCEEDED",
      `the subject has more than ${MAX_SUBJECT_SESSIONS} sessions in the index: erase them by --session first`,
      { limit: "sessions", max: MAX_SUBJECT_SESSIONS },
    );
  const erasure = await eraseDigest({ ...checked, subject }, options);
  const reason = `a session of erased subject ${subject.slice(0, 12)}… (erasure ${erasure.record.erasureId})`;
  const erased: Erasure[] = [];
  for (const session of sessions) {
    const target = { target: "session" as const, by: checked.by, reason };
    erased.push(
      await eraseDigest({ ...target, subject: subjectDigest(`session:${session}`) }, options),
    );
  }
  return { ...erasure, sessions: erased };
}

/** What erasing needs once the subject is known by its digest (retention knows no more). */
export interface DigestErasure extends Omit<EraseRequest, "id"> {
  subject: string;
  /** Erase only this revision of the key (a newer generation is left alone). */
  onlyRevision?: number;
}

/** Purge, scrub, record: the three steps of an erasure, for a subject named by its digest. */
export async function eraseDigest(request: DigestErasure, options: EraseOptions): Promise<Erasure> {
  const { subject } = request;
  const { nc, subjects } = options.bus;
  const keyPurged = await purgeDataKey(nc, subjects, subject, request.onlyRevision);
  const rowsScrubbed =
    options.index === undefined
      ? undefined
      : await scrubErasedRows(options.index, subjects.namespace, subject);
  const erasureId = nuid.next();
  const record: ErasureRecord = {
    v: 1,
    kind: "erasure",
    hook: "unknown",
    context: { agentId: ERASURE_AGENT, sessionKey: erasureId },
    erasureId,
    subject,
    target: request.target,
    by: request.by,
    reason: request.reason,
    keyPurged,
    ...(rowsScrubbed === undefined ? {} : { rowsScrubbed }),
    erasedAt: new Date().toISOString(),
  };
  return { record, seq: await appendErasure(record, options) };
}

async function appendErasure(record: ErasureRecord, options: EraseOptions): Promise<number> {
  const { bus } = options;
  const signer =
    options.signingKey === undefined
      ? undefined
      : await RecordSigner.start({
          bus,
          key: options.signingKey,
          coordinatorId: `privacy:${record.by}`,
          logger: options.logger ?? pino({ level: "silent" }),
        });
  try {
    const subject = bus.subjects.audit(ERASURE_AGENT, record.erasureId, "unknown", "erasure");
    const appended = await new LogWriter(bus, signer).append(
      subject,
      record,
      `erasure.${record.erasureId}`,
      Date.now() + APPEND_MS,
    );
    return appended.seq;
  } finally {
    await signer?.stop();
  }
}
