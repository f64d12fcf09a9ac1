/**
 * The pure part of checking coordinator signatures in `audit verify` (docs/security.md, "Signed
 * decisions"). Fed signature batches (stream order) and log records (log order), it says of each
 * record whether a trusted coordinator signed exactly its subject and bytes at its sequence:
 *
 * - `unsigned-record`: no batch of a trusted key lists it, and it is older than the grace (or
 *   carries no `Hookbus-Signer` header: no signing coordinator wrote it);
 * - `bad-signature`: a batch whose signature does not verify, or a record whose bytes or subject
 *   differ from what the trusted batch listing its sequence signed;
 * - `untrusted-key`: a batch signed by a key not in the trusted list (and the records only it lists);
 * - `batch-chain-break`: a coordinator run's batches skip an index or do not link, or a run's
 *   first batch in the stream is not its batch 1 (its earlier batches were removed);
 * - `signed-record-missing` (kind removed): a trusted batch lists a sequence the log no longer
 *   holds, inside the log or beyond its end (the log was truncated, or deleted and re-created);
 * - `signed-twice` (kind removed): trusted batches signed two different records under one
 *   sequence: the log was re-created and the sequence reused, so one signed record is gone.
 *
 * Records younger than the grace with a signer header and no batch yet are `pending`: counted,
 * not findings. Older ones a dead coordinator run left unsigned are its crash tail, named apart
 * and not findings, within the bounds of verify-crash-tail.ts. Memory is bounded by the records of one grace window (the caller reads batches
 * only up to the record's time plus the grace, and entries behind the log walk are dropped).
 */
import { recordHash, type StoredSignatureBatch } from "../log/sign/batch.js";
import { SignatureVerifier } from "../log/sign/keys.js";
import type { RecordSignatureStats, VerifyFinding } from "./verify-analyse.js";
import type { LogItem } from "./verify-read.js";
import { CrashTails, type CrashTail, type CrashTailOptions } from "./verify-crash-tail.js";

export interface SignatureCheckOptions {
  namespace: string;
  /** Trusted coordinator public keys (non-empty). */
  keys: readonly string[];
  /** How long after it was stored a record may still wait for its batch. */
  graceMs: number;
  /** When verification started (epoch ms): records newer than now − grace may be pending. */
  now: number;
  /** Only some sessions are read: sequences batches list but the walk skips are not missing. */
  filtered: boolean;
  /** The log's first sequence: older ones aged out (retention), they are not missing. */
  logFirstSeq: number;
  /** The signature stream's first sequence: above 1, runs may have begun before it. */
  signatureFirstSeq?: number;
  /** The crash window (verify-crash-tail.ts; defaults there). */
  crashWindow?: CrashTailOptions;
}

interface Cover {
  /** Hashes trusted batches signed for this sequence (one, unless a key signed twice). */
  hashes: string[];
  batchSeq: number;
}

/** Sweep entries behind the log walk every this many records. */
const SWEEP_EVERY = 1024;
/** Runs (key + epoch) remembered for the batch chain check. */
const RUNS_REMEMBERED = 10_000;

export class RecordSignatureCheck {
  private readonly verifier: SignatureVerifier;
  private readonly covered = new Map<number, Cover>();
  private readonly untrusted = new Map<number, string>();
  private readonly runs = new Map<string, { index: number; hash: string }>();
  private readonly stats: RecordSignatureStats;
  private readonly tails: CrashTails;
  private lastSeq = 0;
  private sinceSweep = 0;
  /** A run was forgotten (RUNS_REMEMBERED): one seen again cannot be told from one cut short. */
  private runsForgotten = false;

  constructor(private readonly options: SignatureCheckOptions) {
    this.verifier = new SignatureVerifier(options.keys);
    this.tails = new CrashTails(options.crashWindow);
    this.stats = {
      keys: options.keys.length,
      batches: 0,
      signed: 0,
      pending: 0,
      graceMs: options.graceMs,
    };
  }

  /** Until when (epoch ms) batches must be read before `item` can be judged. */
  horizon(item: LogItem): number {
    return item.storedAt + this.options.graceMs;
  }

  /**
   * `floorSeq`: the sequence of the next record to be judged. On a filtered walk entries below it
   * can match nothing any more and are not kept (memory stays bounded however sparse the walk).
   */
  addBatch(stored: StoredSignatureBatch, batchHash: string, floorSeq = 0): VerifyFinding[] {
    this.stats.batches++;
    const where = { kind: "signature" as const, batchSeq: stored.streamSeq };
    const batch = stored.batch;
    if (batch === undefined) {
      return [
        {
          ...where,
          reason: "bad-batch",
          message: `signature stream seq ${stored.streamSeq} is not a signature batch: ${stored.invalid ?? "unreadable"}`,
        },
      ];
    }
    const key = stored.key ?? "";
    const what = `signature batch ${batch.index} of coordinator ${batch.coordinator} (signature stream seq ${stored.streamSeq})`;
    if (!this.verifier.trusts(key)) {
      for (const [seq] of batch.records) if (!this.covered.has(seq)) this.untrusted.set(seq, key);
      return [
        {
          ...where,
          reason: "untrusted-key",
          message: `${what} is signed by ${key || "nobody"}, not by a trusted coordinator key`,
        },
      ];
    }
    if (
      stored.signature === undefined ||
      !this.verifier.verify(key, stored.data, stored.signature)
    ) {
      return [
        {
          ...where,
          reason: "bad-signature",
          message: `${what}: its signature by ${key} does not verify: the batch was forged or altered`,
        },
      ];
    }
    const findings = this.checkRun(key, batch, batchHash, where, what);
    if (batch.namespace !== this.options.namespace) {
      findings.push({
        ...where,
        reason: "bad-batch",
        message: `${what} belongs to namespace ${batch.namespace}`,
      });
      return findings;
    }
    this.tails.addBatch(key, batch, stored.storedAt);
    for (const [seq, hash] of batch.records) {
      // The walk is past it (a batch stored out of its grace), or a filtered walk will not meet it.
      if (seq <= this.lastSeq || (this.options.filtered && seq < floorSeq)) continue;
      const cover = this.covered.get(seq);
      if (cover === undefined)
        this.covered.set(seq, { hashes: [hash], batchSeq: stored.streamSeq });
      else if (!cover.hashes.includes(hash)) {
        cover.hashes.push(hash);
        findings.push(signedTwice(seq, cover.batchSeq, stored.streamSeq));
      }
      this.untrusted.delete(seq);
    }
    return findings;
  }

  /** A coordinator run's batches count up from 1 and link: a gap is a batch that was removed. */
  private checkRun(
    key: string,
    batch: NonNullable<StoredSignatureBatch["batch"]>,
    hash: string,
    where: { kind: "signature"; batchSeq: number },
    what: string,
  ): VerifyFinding[] {
    const run = `${key}.${batch.epoch}`;
    const previous = this.runs.get(run);
    this.runs.delete(run);
    this.runs.set(run, { index: batch.index, hash });
    if (this.runs.size > RUNS_REMEMBERED) {
      this.runs.delete(this.runs.keys().next().value!);
      this.runsForgotten = true;
    }
    if (previous === undefined) {
      // The stream keeps every batch (no retention): a run first met past its batch 1 lost those.
      const complete = (this.options.signatureFirstSeq ?? 1) <= 1 && !this.runsForgotten;
      if (batch.index === 1 || !complete) return [];
      return [
        {
          ...where,
          reason: "batch-chain-break",
          message: `${what} is the first of its run in the signature stream: batches 1-${batch.index - 1} of the run were removed (the stream was truncated, or deleted and re-created)`,
        },
      ];
    }
    if (batch.index === previous.index + 1 && batch.prev === previous.hash) return [];
    // The same batch again: a retry stored after JetStream's duplicate window. It moves nothing.
    if (batch.index === previous.index && hash === previous.hash) return [];
    return [
      {
        ...where,
        reason: "batch-chain-break",
        message: `${what} follows batch ${previous.index} of its run without linking to it: a signature batch is missing or was replaced`,
      },
    ];
  }

  checkRecord(item: LogItem): VerifyFinding[] {
    this.lastSeq = item.seq;
    const findings = this.sweep(item.seq);
    const about = { seq: item.seq, subject: item.subject, kind: "signature" as const };
    const cover = this.covered.get(item.seq);
    this.covered.delete(item.seq);
    const untrustedKey = this.untrusted.get(item.seq);
    this.untrusted.delete(item.seq);
    if (cover !== undefined) {
      if (cover.hashes.includes(recordHash(item.subject, item.data))) {
        this.stats.signed++;
        return findings;
      }
      findings.push({
        ...about,
        batchSeq: cover.batchSeq,
        reason: "bad-signature",
        message: `seq ${item.seq}: its bytes or subject are not what the coordinator signed for this sequence (signature stream seq ${cover.batchSeq}): altered, or another record under a signed sequence`,
      });
      return findings;
    }
    const young = item.storedAt > this.options.now - this.options.graceMs;
    if (young && item.signer !== undefined) {
      this.stats.pending++;
      return findings;
    }
    if (untrustedKey !== undefined) {
      findings.push({
        ...about,
        reason: "untrusted-key",
        message: `seq ${item.seq} is signed only by ${untrustedKey}, not a trusted coordinator key`,
      });
      return findings;
    }
    // Judged once every batch is read: it may be a dead run's crash tail.
    if (this.verifier.trusts(item.signer ?? "") && this.tails.hold(item)) return findings;
    findings.push(this.unsigned(item));
    return findings;
  }

  private unsigned(item: LogItem, why?: string): VerifyFinding {
    return {
      seq: item.seq,
      subject: item.subject,
      kind: "signature",
      reason: "unsigned-record",
      message:
        item.signer === undefined
          ? `seq ${item.seq} carries no coordinator signature: written by something other than a signing coordinator`
          : `seq ${item.seq} names signer ${item.signer} but no trusted coordinator signed it within ${this.options.graceMs} ms${why === undefined ? "" : `, and it is no crash tail: ${why}`}`,
    };
  }

  /** Entries behind the walk: on an unfiltered walk, sequences signed but no longer in the log. */
  private sweep(seq: number, all = false): VerifyFinding[] {
    if (!all && ++this.sinceSweep < SWEEP_EVERY) return [];
    this.sinceSweep = 0;
    const findings: VerifyFinding[] = [];
    for (const [listed, cover] of this.covered) {
      if (!all && listed >= seq) continue;
      this.covered.delete(listed);
      if (this.options.filtered || listed < this.options.logFirstSeq) continue;
      findings.push({
        kind: "removed",
        reason: "signed-record-missing",
        seq: listed,
        batchSeq: cover.batchSeq,
        message: `seq ${listed} was signed by a coordinator (signature stream seq ${cover.batchSeq}) but the log no longer holds it`,
      });
    }
    for (const listed of this.untrusted.keys())
      if (all || listed < seq) this.untrusted.delete(listed);
    return findings;
  }

  /**
   * After the last record: whatever trusted batches list and the walk never met was removed,
   * beyond the log's end too. The batches were read up to where their stream ended before the
   * log's end was read (readBounds), and a coordinator signs only records the log has stored, so
   * a listed sequence past `logLastSeq` was stored once and is gone: the log was truncated, or
   * deleted and re-created shorter (issue 31).
   */
  finish(): { findings: VerifyFinding[]; stats: RecordSignatureStats; crashTails: CrashTail[] } {
    const findings = this.sweep(Number.MAX_SAFE_INTEGER, true);
    const { tails, unsigned } = this.tails.finish();
    for (const { item, why } of unsigned) findings.push(this.unsigned(item, why));
    return { findings, stats: { ...this.stats }, crashTails: tails };
  }
}

function signedTwice(seq: number, firstBatchSeq: number, batchSeq: number): VerifyFinding {
  return {
    kind: "removed",
    reason: "signed-twice",
    seq,
    batchSeq,
    message: `seq ${seq} was signed for two different records (signature stream seqs ${firstBatchSeq} and ${batchSeq}): the log was deleted and re-created, and a signed record under this sequence replaced`,
  };
}
