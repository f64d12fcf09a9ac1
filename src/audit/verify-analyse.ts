/**
 * The pure part of `audit verify`: fed seal batches and log records in stream order (batch k,
 * then the records up to its `toSeq`, then batch k+1, …), it checks every record against its
 * seal and every batch against its signature and the batch before it. No I/O, and memory bounded
 * by one batch plus fixed-size caches, however large the log (docs/tamper-evidence.md).
 */
import { encodeToken } from "../bus/tokens.js";
import { sessionOfSubject, type SealBatch } from "../log/seal/batch.js";
import { chainHash } from "../log/seal/hash.js";
import { verifySignature } from "../log/seal/keys.js";
import type { StoredBatch } from "../log/seal/stream.js";
import type { LogItem } from "./verify-read.js";
import type { CrashTail } from "./verify-crash-tail.js";
import { subjectMismatches } from "./verify-subject.js";

export type FindingKind =
  "altered" | "removed" | "inserted" | "re-subjected" | "seal" | "signature" | "stalled" | "lease";

export interface VerifyFinding {
  kind: FindingKind;
  reason: string;
  /** The log record's sequence (absent for findings about a seal batch). */
  seq?: number;
  subject?: string;
  /** The seal batch concerned (index), and its sequence in the seal stream. */
  batch?: number;
  batchSeq?: number;
  message: string;
}

export interface AnchorPoint {
  batch: number;
  hash: string;
}

export interface AnalyserOptions {
  namespace: string;
  /** Only records of these sessions (undefined: all). */
  agentId?: string;
  sessionKey?: string;
  /** Trusted sealer public keys; empty: signatures are checked against the key each batch names. */
  keys: readonly string[];
  anchor?: AnchorPoint;
  /**
   * A record unsealed longer than this (ms) is a `stalled` finding: sealed that long after it was
   * stored, or still unsealed that long at `now` (default DEFAULT_MAX_SEAL_DELAY_MS).
   */
  maxSealDelayMs?: number;
  /** The time the unsealed tail is judged at (default: when the analysis finishes). */
  now?: Date;
}

/** 10× the sealer's default lease (5 s): a standby takes over well within it. */
export const DEFAULT_MAX_SEAL_DELAY_MS = 50_000;
/** Stalled records named one by one; the rest counted in the span's finding. */
const STALLED_NAMED = 20;

/** Coordinator signatures of the records (verify-signatures.ts). */
export interface RecordSignatureStats {
  /** Trusted coordinator keys checked against. */
  keys: number;
  /** Signature batches read. */
  batches: number;
  /** Records covered by a valid signature of a trusted key. */
  signed: number;
  /** Records still inside the grace without their batch (not a finding). */
  pending: number;
  /** How long a record could wait for its batch before it counted as unsigned. */
  graceMs: number;
}

export interface VerifyReport {
  ok: boolean;
  namespace: string;
  filter: { agentId?: string; sessionKey?: string };
  /** Log records read. */
  records: number;
  /** Of those, records checked against a seal. */
  sealed: number;
  batches: number;
  /** The last log sequence the seals cover (0: none). */
  sealedThrough: number;
  /** Records after the last seal: not yet sealed, so not checked against a seal (not tampering). */
  unsealed: { records: number; fromSeq?: number; sample: { seq: number; subject: string }[] };
  /** Records carrying the per-record `chain` field of hookbus before the sealer. */
  legacyChained: number;
  signatures: "trusted-keys" | "self-declared";
  /** Coordinator signatures of the records (absent: no trusted coordinator keys were given). */
  recordSignatures?: RecordSignatureStats;
  /** Signature batches in the namespace that were not checked (no trusted coordinator keys). */
  uncheckedSignatureBatches?: number;
  /**
   * Records coordinators stored but could not sign before they died (verify-crash-tail.ts):
   * named, not findings. Present when coordinator keys were given.
   */
  crashTails?: CrashTail[];
  anchor?: AnchorPoint & { found: boolean };
  findings: VerifyFinding[];
  /** Findings beyond the first MAX_FINDINGS are counted, not kept. */
  findingsOmitted: number;
  checkedAt: string;
}

interface Expected {
  session: string;
  prev: string | null;
  hash: string;
  batch: number;
}

const MAX_FINDINGS = 10_000;
const UNSEALED_SAMPLE = 20;
/** Session heads remembered across batches for the continuity check. */
const HEADS_REMEMBERED = 10_000;
/** Message ids remembered to catch a record inserted with a stored record's call id. */
const IDS_REMEMBERED = 100_000;

export class SealAnalyser {
  private readonly findings: VerifyFinding[] = [];
  private omitted = 0;
  private records = 0;
  private sealed = 0;
  private batches = 0;
  private legacy = 0;
  private sealedThrough = 0;
  private previous: { index: number; hash: string; toSeq: number } | undefined;
  private expected = new Map<number, Expected>();
  private readonly heads = new Map<string, string>();
  private readonly ids = new Map<string, number>();
  private unsealed: VerifyReport["unsealed"] = { records: 0, sample: [] };
  private anchorFound = false;
  /** When the batch being read was stored (its records were sealed then). */
  private batchStoredAt: Date | undefined;
  private stalledNamed = 0;
  private stalledCount = 0;
  /** The oldest unsealed record's stored time (for the tail's stalled check). */
  private oldestUnsealed: { seq: number; storedAt: number } | undefined;
  private readonly agentToken: string | undefined;
  private readonly sessionToken: string | undefined;

  constructor(private readonly options: AnalyserOptions) {
    this.agentToken = options.agentId === undefined ? undefined : encodeToken(options.agentId);
    this.sessionToken =
      options.sessionKey === undefined ? undefined : encodeToken(options.sessionKey);
  }

  /** A finding of another check (coordinator signatures), counted with these. */
  note(finding: VerifyFinding): void {
    this.find(finding);
  }

  private find(finding: VerifyFinding): void {
    if (this.findings.length < MAX_FINDINGS) this.findings.push(finding);
    else this.omitted++;
  }

  private wanted(session: string): boolean {
    if (this.agentToken === undefined && this.sessionToken === undefined) return true;
    const [a, s] = session.split(".");
    return (
      session !== "" &&
      (this.agentToken === undefined || a === this.agentToken) &&
      (this.sessionToken === undefined || s === this.sessionToken)
    );
  }

  /** Records the previous batch lists that the log no longer holds. */
  private closeBatch(): void {
    for (const [seq, e] of this.expected) {
      this.find({
        kind: "removed",
        reason: "missing",
        seq,
        batch: e.batch,
        message: `seq ${seq} (session ${e.session}) was sealed in batch ${e.batch} but the log no longer holds it`,
      });
    }
    this.expected = new Map();
  }

  addBatch(stored: StoredBatch): void {
    this.closeBatch();
    this.batches++;
    const where = { batchSeq: stored.streamSeq };
    const batch = stored.batch;
    if (batch === undefined) {
      this.find({
        ...where,
        kind: "seal",
        reason: "bad-batch",
        message: `seal stream seq ${stored.streamSeq} is not a seal batch: ${stored.invalid ?? "unreadable"}`,
      });
      return;
    }
    const at = { ...where, batch: batch.index };
    // The first batch seals whatever the log held when the first sealer started: never "late".
    this.batchStoredAt = batch.index === 1 ? undefined : stored.storedAt;
    this.checkSignature(stored, batch, at);
    this.checkLink(stored, batch, at);
    if (this.options.anchor?.batch === batch.index) {
      this.anchorFound = true;
      if (this.options.anchor.hash !== stored.hash) {
        this.find({
          ...at,
          kind: "seal",
          reason: "anchor-mismatch",
          message: `batch ${batch.index} is not the batch the anchor vouches for (hash ${stored.hash.slice(0, 12)}, anchor ${this.options.anchor.hash.slice(0, 12)}): the seal history was rewritten`,
        });
      }
    }
    for (const s of batch.sessions) {
      const known = this.heads.get(s.session);
      if (known !== undefined && known !== s.prev) {
        this.find({
          ...at,
          kind: "seal",
          reason: "session-chain-break",
          message: `batch ${batch.index}: session ${s.session} continues from ${String(s.prev).slice(0, 12)}, but its previous head was ${known.slice(0, 12)}`,
        });
      }
      this.heads.delete(s.session);
      this.heads.set(s.session, s.records.at(-1)![1]);
      if (this.heads.size > HEADS_REMEMBERED) this.heads.delete(this.heads.keys().next().value!);
      if (!this.wanted(s.session)) continue;
      let prev = s.prev;
      for (const [seq, hash] of s.records) {
        this.expected.set(seq, { session: s.session, prev, hash, batch: batch.index });
        prev = hash;
      }
    }
    this.previous = { index: batch.index, hash: stored.hash, toSeq: batch.toSeq };
    this.sealedThrough = Math.max(this.sealedThrough, batch.toSeq);
  }

  private checkSignature(stored: StoredBatch, batch: SealBatch, at: object): void {
    const keys = this.options.keys;
    const signer = stored.signer;
    const trusted = keys.length === 0 ? signer !== undefined : keys.includes(signer ?? "");
    const valid =
      trusted &&
      stored.signature !== undefined &&
      verifySignature(signer!, stored.data, stored.signature);
    if (!valid) {
      this.find({
        ...at,
        kind: "seal",
        reason: trusted ? "bad-signature" : "untrusted-key",
        message: trusted
          ? `batch ${batch.index} (log seqs ${batch.fromSeq}-${batch.toSeq}): its signature does not verify: the batch was forged or altered`
          : `batch ${batch.index} (log seqs ${batch.fromSeq}-${batch.toSeq}) is signed by ${signer ?? "nobody"}, not by a trusted sealer key`,
      });
    }
  }

  private checkLink(stored: StoredBatch, batch: SealBatch, at: object): void {
    const prev = this.previous;
    const problems: string[] = [];
    if (batch.namespace !== this.options.namespace) problems.push(`namespace ${batch.namespace}`);
    if (prev === undefined) {
      if (batch.index !== 1 || batch.prev !== null) {
        problems.push(`the first batch in the stream is batch ${batch.index}, not batch 1`);
      }
    } else {
      if (batch.index !== prev.index + 1)
        problems.push(`batch ${batch.index} follows batch ${prev.index}`);
      if (batch.prev !== prev.hash) problems.push("its link does not name the batch before it");
      if (batch.fromSeq !== prev.toSeq + 1) {
        problems.push(
          `it starts at log seq ${batch.fromSeq}, the previous one ended at ${prev.toSeq}`,
        );
      }
    }
    const seqs = batch.sessions.flatMap((s) => s.records.map(([seq]) => seq));
    if (seqs.some((seq) => seq < batch.fromSeq || seq > batch.toSeq)) {
      problems.push("it lists records outside its range");
    }
    if (problems.length > 0) {
      this.find({
        ...at,
        kind: "seal",
        reason: "seal-chain-break",
        message: `batch ${batch.index} (seal stream seq ${stored.streamSeq}): ${problems.join("; ")}`,
      });
    }
  }

  addRecord(item: LogItem): void {
    this.records++;
    const about = { seq: item.seq, subject: item.subject };
    if (item.unreadable !== undefined) {
      this.find({
        ...about,
        kind: "altered",
        reason: "unreadable",
        message: `seq ${item.seq} cannot be decoded: ${item.unreadable}`,
      });
    } else {
      if ((item.record as { chain?: unknown } | null)?.chain !== undefined) this.legacy++;
      const mismatches = subjectMismatches(this.options.namespace, item.subject, item.record);
      if (mismatches.length > 0) {
        this.find({
          ...about,
          kind: "re-subjected",
          reason: "subject-mismatch",
          message: `seq ${item.seq} ${describe(item)}: ${mismatches.join("; ")}`,
        });
      }
      this.checkDuplicateId(item);
    }
    if (item.seq > this.sealedThrough) {
      this.unsealed.records++;
      this.unsealed.fromSeq ??= item.seq;
      this.oldestUnsealed ??= { seq: item.seq, storedAt: item.storedAt };
      if (this.unsealed.sample.length < UNSEALED_SAMPLE) this.unsealed.sample.push(about);
      return;
    }
    const expected = this.expected.get(item.seq);
    if (expected === undefined) {
      this.find({
        ...about,
        kind: "inserted",
        reason: "not-sealed",
        message: `seq ${item.seq} ${describe(item)} is inside the sealed range but no seal batch lists it`,
      });
      return;
    }
    this.expected.delete(item.seq);
    this.sealed++;
    this.checkDelay(item, expected.batch);
    const session = sessionOfSubject(this.options.namespace, item.subject);
    if (session !== expected.session) {
      this.find({
        ...about,
        batch: expected.batch,
        kind: "re-subjected",
        reason: "moved",
        message: `seq ${item.seq} was sealed in session ${expected.session}, the log now files it under ${session}`,
      });
    } else if (chainHash(expected.prev, item.subject, item.data) !== expected.hash) {
      this.find({
        ...about,
        batch: expected.batch,
        kind: "altered",
        reason: "hash-mismatch",
        message: `seq ${item.seq} ${describe(item)} was altered: its bytes or subject no longer hash to its seal in batch ${expected.batch}`,
      });
    }
  }

  private get maxSealDelayMs(): number {
    return this.options.maxSealDelayMs ?? DEFAULT_MAX_SEAL_DELAY_MS;
  }

  /** A record sealed long after it was stored: sealing stopped meanwhile (docs/tamper-evidence.md). */
  private checkDelay(item: LogItem, batch: number): void {
    if (this.batchStoredAt === undefined) return;
    const delayMs = this.batchStoredAt.getTime() - item.storedAt;
    if (delayMs <= this.maxSealDelayMs) return;
    this.stalledCount++;
    if (this.stalledNamed >= STALLED_NAMED) return;
    this.stalledNamed++;
    this.find({
      seq: item.seq,
      subject: item.subject,
      batch,
      kind: "stalled",
      reason: "sealed-late",
      message: `seq ${item.seq} ${describe(item)} was sealed ${Math.round(delayMs / 1000)} s after it was stored (bound ${Math.round(this.maxSealDelayMs / 1000)} s): sealing stopped meanwhile, and a record removed in that time left no trace in the seals`,
    });
  }

  /** The unsealed tail, judged at `now`: records waiting longer than the bound. */
  private checkTail(): void {
    const oldest = this.oldestUnsealed;
    if (oldest === undefined || this.batches === 0) return; // no sealer has ever run: not stalled
    const waitedMs = (this.options.now ?? new Date()).getTime() - oldest.storedAt;
    if (waitedMs <= this.maxSealDelayMs) return;
    this.find({
      seq: oldest.seq,
      kind: "stalled",
      reason: "unsealed-too-long",
      message: `${this.unsealed.records} record(s) from seq ${oldest.seq} on are unsealed, the oldest for ${Math.round(waitedMs / 1000)} s (bound ${Math.round(this.maxSealDelayMs / 1000)} s): no sealer is sealing (is one running, and does it hold the lease?)`,
    });
  }

  private checkDuplicateId(item: LogItem): void {
    const id = messageId(item.record);
    if (id === undefined) return;
    const first = this.ids.get(id);
    if (first !== undefined && first !== item.seq) {
      this.find({
        seq: item.seq,
        subject: item.subject,
        kind: "inserted",
        reason: "duplicate-id",
        message: `seq ${item.seq} ${describe(item)} repeats the id of seq ${first} (${id}): the log stores one record per id, this one was put there beside hookbus`,
      });
      return;
    }
    this.ids.set(id, item.seq);
    if (this.ids.size > IDS_REMEMBERED) this.ids.delete(this.ids.keys().next().value!);
  }

  finish(
    extra: Pick<VerifyReport, "recordSignatures" | "uncheckedSignatureBatches" | "crashTails"> = {},
  ): VerifyReport {
    this.closeBatch();
    this.checkTail();
    if (this.stalledCount > this.stalledNamed)
      this.find({
        kind: "stalled",
        reason: "sealed-late",
        message: `${this.stalledCount - this.stalledNamed} more record(s) were sealed later than the bound (${this.stalledNamed} named above)`,
      });
    const anchor = this.options.anchor;
    if (anchor !== undefined && !this.anchorFound) {
      this.find({
        kind: "seal",
        reason: "anchor-missing",
        batch: anchor.batch,
        message: `the seal stream has no batch ${anchor.batch}, which the anchor vouches for: the seal stream was truncated, or deleted and recreated`,
      });
    }
    return {
      ok: this.findings.length === 0,
      namespace: this.options.namespace,
      filter: {
        ...(this.options.agentId === undefined ? {} : { agentId: this.options.agentId }),
        ...(this.options.sessionKey === undefined ? {} : { sessionKey: this.options.sessionKey }),
      },
      records: this.records,
      sealed: this.sealed,
      batches: this.batches,
      sealedThrough: this.sealedThrough,
      unsealed: this.unsealed,
      legacyChained: this.legacy,
      signatures: this.options.keys.length === 0 ? "self-declared" : "trusted-keys",
      ...extra,
      ...(anchor === undefined ? {} : { anchor: { ...anchor, found: this.anchorFound } }),
      findings: this.findings,
      findingsOmitted: this.omitted,
      checkedAt: new Date().toISOString(),
    };
  }
}

/**
 * The id the log de-duplicates a decision by (one record per call). Only decisions: an error or
 * observation may legitimately be stored twice when its retry comes after the dedup window.
 */
function messageId(record: unknown): string | undefined {
  const r = record as Record<string, unknown> | null;
  if (r === null || typeof r !== "object" || r.kind !== "decision") return undefined;
  const ctx = (r.context ?? {}) as Record<string, unknown>;
  return typeof r.callId === "string"
    ? `decision.${String(ctx.agentId)}.${String(ctx.sessionKey)}.${r.callId}`
    : undefined;
}

function describe(item: LogItem): string {
  const r = (item.record ?? {}) as Record<string, unknown>;
  const what = [r.kind, r.hook, r.callId ?? r.eventId, r.policy]
    .filter((v) => typeof v === "string")
    .join(" ");
  return what === "" ? "" : `(${what})`;
}
