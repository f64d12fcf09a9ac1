/**
 * Canonical JSON (used by redaction's hashes), and the per-record chain of hookbus before the
 * sealer.
 *
 * LEGACY: tamper evidence is now the sealer's (src/sealer/, docs/tamper-evidence.md); nothing on
 * the decision path links records any more, and records written before it keep their `chain`
 * field (the record schema still reads it; verify counts such records and seals them like any
 * other). `ChainKeeper` and its helpers remain only for the agent observer's optional chain
 * parameter, which no caller sets; delete them once observations go through coordinators.
 *
 * What the pre-sealer chain did:
 * - `canonicalize` is the one JSON form that is hashed (sorted keys, no whitespace; RFC 8785 for
 *   the values hookbus writes), and `recordHash` hashes a record with `chain.hash` left out.
 * - The head of each session's chain (its last claimed index and hash) lives in a JetStream KV
 *   bucket `<ns>_chain`, key `<encodeToken(agentId)>.<encodeToken(sessionKey)>`. A writer claims
 *   the next position with compare-and-set on that key (the KV revision is the key subject's
 *   last sequence, so this is JetStream's expected-last-subject-sequence), retries when another
 *   writer got there first, and only then publishes the record. Concurrent writers of one session
 *   (several coordinators, the agent's observations) therefore never fork the chain.
 * - `ChainKeeper` caches heads per session, so the common case is one CAS round trip per record,
 *   and batches records of one session that wait behind a CAS in flight (group commit: one CAS
 *   for all of them).
 * - A position whose record turned out to be a duplicate (a retried call the log already holds)
 *   is recorded as a *voided position* (`<key>.void.<index>`) so that the verifier can tell it
 *   from a removal.
 */
import { createHash } from "node:crypto";
import { JetStreamApiCodes, JetStreamApiError, jetstream } from "@nats-io/jetstream";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import { sleep } from "../time.js";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { defaultReplicas } from "../bus/streams.js";
import { pino, type Logger } from "pino";
import type { Subjects } from "../bus/subjects.js";
import { encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../errors.js";
import type { ChainLink, LogRecord } from "./record.js";

// ---------------------------------------------------------------------------------------------
// Canonical JSON and record hashes
// ---------------------------------------------------------------------------------------------

/**
 * The canonical JSON text of a value: object members sorted by key (UTF-16 code units, as
 * JavaScript's default sort), no whitespace, strings and numbers exactly as `JSON.stringify`
 * writes them. Members whose value is `undefined` (or a function or symbol) are left out and such
 * array elements become `null`, exactly as `JSON.stringify` does, so a record hashes the same
 * before it is stored and after it is read back. For JSON without lone surrogates this is RFC 8785
 * (JSON Canonicalization Scheme).
 */
export function canonicalize(value: unknown): string {
  const text = write(value);
  if (text === undefined) throw new TypeError("canonicalize: the value has no JSON form");
  return text;
}

function write(value: unknown): string | undefined {
  if (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  ) {
    value = (value as { toJSON: () => unknown }).toJSON();
  }
  switch (typeof value) {
    case "string":
    case "number":
    case "boolean":
      // JSON.stringify: shortest round-trip numbers, -0 as 0, non-finite as null; ES string escapes.
      return JSON.stringify(value);
    case "bigint":
      throw new TypeError("canonicalize: BigInt has no JSON form");
    case "object": {
      if (value === null) return "null";
      // Built by concatenation, not arrays and joins: this runs on every call (the call digest).
      if (Array.isArray(value)) {
        let out = "[";
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ",";
          out += write(value[i]) ?? "null";
        }
        return out + "]";
      }
      let out = "{";
      for (const key of Object.keys(value).sort()) {
        const member = write((value as Record<string, unknown>)[key]);
        if (member === undefined) continue;
        if (out.length > 1) out += ",";
        out += JSON.stringify(key) + ":" + member;
      }
      return out + "}";
    }
    default:
      return undefined; // undefined, function, symbol
  }
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** sha256 (hex) of the record's canonical JSON with `chain.hash` left out (index and prev included). */
export function recordHash(record: unknown): string {
  const chain = (record as { chain?: unknown } | null)?.chain;
  if (chain === null || typeof chain !== "object") {
    throw new TypeError("recordHash: the record has no chain link");
  }
  const { hash: _hash, ...link } = chain as Record<string, unknown>;
  return sha256Hex(canonicalize({ ...(record as object), chain: link }));
}

/** The record with its chain link at `index` after `prev` (the previous record's hash). */
export function linkRecord<T extends LogRecord>(
  record: T,
  index: number,
  prev: string | null,
): T & { chain: ChainLink } {
  const unhashed = { ...record, chain: { index, prev, hash: "" } };
  return { ...record, chain: { index, prev, hash: recordHash(unhashed) } };
}

/** The JetStream message id a record is published with (the de-duplication key of the log). */
export function recordMessageId(record: LogRecord): string {
  switch (record.kind) {
    case "decision":
      return `decision.${record.callId}`;
    case "error":
      return `error.${record.callId}`;
    case "late":
      return `late.${record.callId}.${record.policy}`;
    case "observation":
      return `observed.${record.eventId}`;
    case "approval":
      return `approval.${record.approvalId}`;
  }
}

/** Whether two records sit at the same chain position with the same hash (the same record). */
export function sameLink(a: LogRecord, b: LogRecord): boolean {
  return (
    a.chain !== undefined &&
    b.chain !== undefined &&
    a.chain.index === b.chain.index &&
    a.chain.hash === b.chain.hash
  );
}

// ---------------------------------------------------------------------------------------------
// The chain bucket
// ---------------------------------------------------------------------------------------------

/** `<ns>_chain`: the head of every session's chain, and voided positions. */
export function chainBucketName(subjects: Subjects): string {
  return `${subjects.namespace}_chain`;
}

/** The head key of a session: `<encodeToken(agentId)>.<encodeToken(sessionKey)>`. */
export function chainKey(agentId: string, sessionKey: string): string {
  return `${encodeToken(agentId)}.${encodeToken(sessionKey)}`;
}

/** The head key of the session a log subject belongs to (its agent and session tokens). */
export function chainKeyOfSubject(subjects: Subjects, subject: string): string {
  const prefix = `${subjects.namespace}.audit.`;
  const parts = subject.startsWith(prefix) ? subject.slice(prefix.length).split(".") : [];
  if (parts.length !== 4) throw new RangeError(`not an audit subject: ${subject}`);
  return `${parts[0]}.${parts[1]}`;
}

/** Key of a voided position of a session. */
export function voidKey(key: string, index: number): string {
  return `${key}.void.${index}`;
}

/** Created on first use with history 1 (only the head matters), file storage, no expiry. */
export function openChainBucket(nc: NatsConnection, subjects: Subjects): Promise<KV> {
  // timeout: the per-request default for reads (2 s in the client) is too short on a starved
  // server; claims pass their own deadline-bounded timeout.
  return new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
    chainBucketName(subjects),
    {
      history: 1,
      storage: "file",
      allow_direct: KV_ALLOW_DIRECT,
      replicas: defaultReplicas(),
      timeout: 10_000,
    },
  );
}

/** What the head key holds: the last claimed position of the session. */
export interface ChainHead {
  index: number;
  hash: string;
}

/** What a voided-position key holds. */
export interface VoidedPosition {
  index: number;
  prev: string | null;
  /** The hash of the record that was not stored (the next record links to it). */
  hash: string;
  /** The message id of the record: the log holds another record with it. */
  msgId: string;
  /** Stream sequence of the record the log already held. */
  duplicateOf: number;
  reason: "duplicate";
  at: string;
}

export function parseChainHead(value: unknown): ChainHead | undefined {
  const v = value as Partial<ChainHead> | null;
  return v !== null &&
    typeof v === "object" &&
    Number.isInteger(v.index) &&
    (v.index ?? 0) >= 0 &&
    typeof v.hash === "string"
    ? { index: v.index!, hash: v.hash }
    : undefined;
}

export function parseVoidedPosition(value: unknown): VoidedPosition | undefined {
  const v = value as Partial<VoidedPosition> | null;
  return v !== null &&
    typeof v === "object" &&
    Number.isInteger(v.index) &&
    (v.index ?? 0) >= 1 &&
    typeof v.hash === "string" &&
    (v.prev === null || typeof v.prev === "string") &&
    typeof v.msgId === "string" &&
    Number.isInteger(v.duplicateOf)
    ? (v as VoidedPosition)
    : undefined;
}

// ---------------------------------------------------------------------------------------------
// Claiming positions
// ---------------------------------------------------------------------------------------------

interface CachedHead {
  index: number;
  hash: string | null;
  /** KV revision of the head key; 0 when the key does not exist. */
  revision: number;
}

interface Waiter {
  record: LogRecord;
  deadline: number;
  resolve: (linked: LogRecord & { chain: ChainLink }) => void;
  reject: (error: unknown) => void;
}

interface SessionChain {
  head: CachedHead | undefined;
  queue: Waiter[];
  running: boolean;
}

export interface ChainKeeperOptions {
  logger?: Logger;
  /** Heads kept in memory (least recently used are forgotten, and re-read when needed). */
  maxCachedSessions?: number;
  /** Records linked by one compare-and-set at most. */
  maxBatch?: number;
}

export const DEFAULT_MAX_CACHED_SESSIONS = 10_000;

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

/**
 * Hands out chain positions. One per process (coordinator, agent client); any number of
 * processes may write one session at once.
 */
export class ChainKeeper {
  private readonly sessions = new Map<string, SessionChain>();
  private readonly logger: Logger;
  private readonly maxCached: number;
  private readonly maxBatch: number;

  constructor(
    readonly kv: KV,
    options: ChainKeeperOptions = {},
  ) {
    this.logger = options.logger ?? pino({ level: "silent" });
    this.maxCached = Math.max(1, options.maxCachedSessions ?? DEFAULT_MAX_CACHED_SESSIONS);
    this.maxBatch = Math.max(1, options.maxBatch ?? 1000);
  }

  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    options: ChainKeeperOptions = {},
  ): Promise<ChainKeeper> {
    return new ChainKeeper(await openChainBucket(nc, subjects), options);
  }

  /**
   * Claim the next position of the session `key` for `record` (redaction already applied): resolves
   * with the record linked (`chain` set) once the head in KV says this position is the record's.
   * Fails with HOOKBUS_LOG_UNAVAILABLE when no position could be claimed before the deadline.
   */
  claim<T extends LogRecord>(
    key: string,
    record: T,
    deadline: number,
  ): Promise<T & { chain: ChainLink }> {
    const session = this.session(key);
    return new Promise<T & { chain: ChainLink }>((resolve, reject) => {
      session.queue.push({
        record,
        deadline,
        resolve: resolve as Waiter["resolve"],
        reject,
      });
      if (!session.running) void this.pump(key, session);
    });
  }

  /**
   * The position of `linked` was claimed but its record was not stored because the log already
   * held a record with the same message id (at `duplicateOf`): say so in the bucket, so the
   * verifier reports the gap as voided rather than removed. Best effort; never throws.
   */
  async voidPosition(key: string, linked: LogRecord, duplicateOf: number): Promise<void> {
    if (linked.chain === undefined) return;
    const value: VoidedPosition = {
      index: linked.chain.index,
      prev: linked.chain.prev,
      hash: linked.chain.hash,
      msgId: recordMessageId(linked),
      duplicateOf,
      reason: "duplicate",
      at: new Date().toISOString(),
    };
    try {
      await this.kv.create(voidKey(key, value.index), JSON.stringify(value));
    } catch (error) {
      if (isWrongLastSequence(error)) return; // recorded already (a retry of ours)
      this.logger.error(
        { err: error, key, index: value.index, msgId: value.msgId },
        "could not record a voided chain position; verify will report it as removed",
      );
    }
  }

  private session(key: string): SessionChain {
    let session = this.sessions.get(key);
    if (session !== undefined) {
      // Least recently used last out: move to the end.
      this.sessions.delete(key);
      this.sessions.set(key, session);
      return session;
    }
    session = { head: undefined, queue: [], running: false };
    this.sessions.set(key, session);
    if (this.sessions.size > this.maxCached) {
      for (const [old, s] of this.sessions) {
        if (this.sessions.size <= this.maxCached) break;
        if (!s.running && s.queue.length === 0 && old !== key) this.sessions.delete(old);
      }
    }
    return session;
  }

  private async pump(key: string, session: SessionChain): Promise<void> {
    session.running = true;
    try {
      while (session.queue.length > 0) {
        const batch = session.queue.splice(0, this.maxBatch);
        try {
          await this.commit(key, session, batch);
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      session.running = false;
    }
  }

  private async readHead(key: string): Promise<CachedHead> {
    const entry = await this.kv.get(key);
    if (entry === null) return { index: 0, hash: null, revision: 0 };
    if (entry.operation !== "PUT") {
      // Someone deleted the head: the chain restarts, and verify will show it.
      this.logger.error({ key }, "the chain head was deleted; the session's chain restarts");
      return { index: 0, hash: null, revision: entry.revision };
    }
    let parsed: ChainHead | undefined;
    try {
      parsed = parseChainHead(entry.json());
    } catch {
      parsed = undefined;
    }
    if (parsed === undefined) {
      throw new HookbusError(
        "HOOKBUS_INTERNAL",
        `the chain head ${key} in the chain bucket is not {"index", "hash"}: fix or delete it by hand`,
        { key },
      );
    }
    return {
      index: parsed.index,
      hash: parsed.index === 0 ? null : parsed.hash,
      revision: entry.revision,
    };
  }

  /** Link `batch` after the head and claim the positions with one compare-and-set, retrying. */
  private async commit(key: string, session: SessionChain, batch: Waiter[]): Promise<void> {
    type Linked = LogRecord & { chain: ChainLink };
    let attempt: { head: ChainHead; links: Map<Waiter, Linked> } | undefined;
    let lastError: unknown;
    for (let n = 0; ; n++) {
      const now = Date.now();
      if (n > 0) {
        // Whoever's deadline passed gets its error now; the rest are re-linked and retried.
        for (let i = batch.length - 1; i >= 0; i--) {
          const w = batch[i]!;
          if (w.deadline > now) continue;
          batch.splice(i, 1);
          w.reject(
            new HookbusError(
              "HOOKBUS_LOG_UNAVAILABLE",
              `could not claim a position in the hash chain of session ${key} before the deadline: ${String((lastError as Error)?.message ?? lastError)}`,
              { chainKey: key, attempts: n },
              lastError,
            ),
          );
        }
        if (batch.length === 0) return;
      }
      try {
        session.head ??= await this.readHead(key);
        const head = session.head;
        if (
          attempt !== undefined &&
          head.index === attempt.head.index &&
          head.hash === attempt.head.hash
        ) {
          // The last attempt went through although its answer was lost: the positions are ours
          // (a hash covers its whole record, so an equal head is our last record's position).
          // The batch only shrank since, so every waiter left has its link in the attempt.
          for (const w of batch) w.resolve(attempt.links.get(w)!);
          return;
        }
        let index = head.index;
        let prev = head.hash;
        const links = new Map<Waiter, Linked>();
        for (const w of batch) {
          const linked = linkRecord(w.record, ++index, prev);
          prev = linked.chain.hash;
          links.set(w, linked);
        }
        attempt = { head: { index, hash: prev! }, links };
        const latest = Math.max(...batch.map((w) => w.deadline));
        const revision = await this.kv.put(key, JSON.stringify(attempt.head), {
          previousSeq: head.revision,
          timeout: Math.max(250, Math.min(5000, latest - now)),
        });
        session.head = { index, hash: prev, revision };
        for (const w of batch) w.resolve(links.get(w)!);
        return;
      } catch (error) {
        if (error instanceof HookbusError) throw error;
        lastError = error;
        // Lost a race (another writer claimed first), or the outcome is unknown: re-read the head.
        session.head = undefined;
        if (isWrongLastSequence(error)) {
          // Retry at once, then with a little jitter so that two writers do not lock-step.
          if (n >= 2) await sleep(Math.random() * Math.min(50, 2 ** n));
        } else {
          this.logger.warn({ err: error, key, attempt: n }, "chain head update failed, retrying");
          await sleep(Math.min(50 * 2 ** n, 1000));
        }
      }
    }
  }
}
