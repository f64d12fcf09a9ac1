/**
 * The sealer's early warning for signed decisions (docs/security.md): given the trusted
 * coordinator keys, it follows `<NS>_SIGNATURES` and checks each record it sealed against them.
 * It seals every record whatever the answer (the seal proves what the log held, not who wrote
 * it); a record no trusted coordinator signed within the grace, or whose bytes differ from what
 * was signed, is logged and counted (`hookbus_seal_signature_findings_total{reason}`), so an
 * operator hears of a forged record before anyone runs `audit verify`, which stays the judge.
 *
 * A record a killed coordinator run stored but never signed, inside that run's crash window
 * (src/log/sign/crash-window.ts, the rule verify applies), is counted as `crash-tail` and logged
 * at info, not warned of as unsigned: it is what a kill -9 leaves, not a forgery.
 *
 * Bounded: at most MAX_WAITING sealed records wait for their batch (beyond, the oldest are let
 * go unchecked and counted), and signed entries no sealed record claimed are forgotten after
 * twice the grace. Records older than the grace when this sealer started are not checked (their
 * batches came before it followed the stream).
 */
import { DeliverPolicy } from "@nats-io/jetstream";
import { Counter, type Registry } from "prom-client";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { isStreamNotFound } from "../bus/streams.js";
import { sleep } from "../foundation/time.js";
import {
  recordHash,
  signatureStreamName,
  toStoredSignatureBatch,
  type StoredSignatureBatch,
} from "../log/sign/batch.js";
import { SignatureVerifier } from "../log/sign/keys.js";
import {
  DEFAULT_CRASH_WINDOW,
  RunEvidenceMap,
  outsideCrashWindow,
} from "../log/sign/crash-window.js";

export interface SealedRecord {
  seq: number;
  subject: string;
  data: Uint8Array;
  /** Epoch ms the log stored it. */
  storedAt: number;
  /** Its `Hookbus-Signer` / `Hookbus-Signer-Run` headers. */
  signer?: string;
  signerRun?: string;
}

export type SignatureFindingReason = "unsigned-record" | "bad-signature" | "untrusted-key";
/** Counted beside the findings, not findings: a dead run's unsigned records, records let go. */
type Counted = SignatureFindingReason | "crash-tail" | "unchecked";

const MAX_WAITING = 100_000;
const CHECK_EVERY_MS = 1000;
/** Wait before looking for the signature stream again when no coordinator created it yet. */
const REOPEN_MS = 5000;

export class SealerSignatureCheck {
  private readonly verifier: SignatureVerifier;
  private readonly covered = new Map<number, { hashes: string[]; at: number }>();
  private readonly waiting: SealedRecord[] = [];
  private readonly startedAt = Date.now();
  private readonly counts = new Map<Counted, number>();
  private readonly runs = new RunEvidenceMap();
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  private stopFollowing: (() => void) | undefined;
  private wake: (() => void) | undefined;
  private readonly following: Promise<void>;

  private constructor(
    private readonly bus: Bus,
    keys: readonly string[],
    private readonly graceMs: number,
    private readonly logger: Logger,
  ) {
    this.verifier = new SignatureVerifier(keys);
    this.timer = setInterval(() => this.judge(), CHECK_EVERY_MS);
    this.following = this.follow();
  }

  /** Undefined without trusted keys: nothing to check against. */
  static start(
    bus: Bus,
    options: { coordinatorKeys?: readonly string[]; signatureGraceMs?: number },
    logger: Logger,
  ): SealerSignatureCheck | undefined {
    const keys = options.coordinatorKeys ?? [];
    if (keys.length === 0) return undefined;
    return new SealerSignatureCheck(bus, keys, options.signatureGraceMs ?? 60_000, logger);
  }

  /** Findings so far by reason (and records let go unchecked), e.g. for tests. */
  findings(): Record<string, number> {
    return Object.fromEntries(this.counts);
  }

  register(registry: Registry): void {
    const counts = this.counts;
    new Counter({
      name: "hookbus_seal_signature_findings_total",
      help: "Sealed records no trusted coordinator signed (unsigned-record), or whose bytes differ from what was signed (bad-signature); not findings: crash-tail (a killed coordinator's unsigned records, within its crash window), unchecked (let go past the bound).",
      labelNames: ["reason"],
      registers: [registry],
      collect() {
        this.reset();
        for (const [reason, n] of counts) this.inc({ reason }, n);
      },
    });
  }

  /** Records just sealed: each is checked once its batch came, or its grace ran out. */
  sealed(records: readonly SealedRecord[]): void {
    for (const r of records) {
      if (r.storedAt < this.startedAt - this.graceMs) continue;
      this.waiting.push(r);
    }
    if (this.waiting.length > MAX_WAITING) {
      const over = this.waiting.splice(0, this.waiting.length - MAX_WAITING);
      this.count("unchecked", over.length);
    }
    this.judge();
  }

  private count(reason: Counted, n = 1): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + n);
  }

  private judge(): void {
    const now = Date.now();
    let kept = 0;
    for (const r of this.waiting) {
      const cover = this.covered.get(r.seq);
      if (cover !== undefined) {
        this.covered.delete(r.seq);
        if (!cover.hashes.includes(recordHash(r.subject, r.data))) this.report("bad-signature", r);
      } else if (r.storedAt < now - this.graceMs) {
        this.judgeUnsigned(r);
      } else {
        this.waiting[kept++] = r;
      }
    }
    this.waiting.length = kept;
    for (const [seq, cover] of this.covered) {
      if (cover.at < now - 2 * this.graceMs) this.covered.delete(seq);
    }
  }

  /** Past the grace and unlisted: a dead run's crash tail, or unsigned. */
  private judgeUnsigned(r: SealedRecord): void {
    const trusted = r.signer !== undefined && this.verifier.trusts(r.signer);
    if (!trusted || r.signerRun === undefined) return this.report("unsigned-record", r);
    const run = this.runs.get(r.signer!, r.signerRun);
    const signerRun = r.signerRun;
    if (outsideCrashWindow(run, { ...r, signerRun }, DEFAULT_CRASH_WINDOW) !== undefined)
      return this.report("unsigned-record", r);
    this.count("crash-tail");
    this.logger.info(
      { seq: r.seq, subject: r.subject, coordinator: run!.coordinator, run: signerRun },
      "sealed a record a killed coordinator stored but never signed (its crash tail)",
    );
  }

  private report(reason: SignatureFindingReason, r: SealedRecord): void {
    this.count(reason);
    this.logger.warn(
      { reason, seq: r.seq, subject: r.subject },
      reason === "bad-signature"
        ? "sealed a record whose bytes are not what its coordinator signed"
        : "sealed a record no trusted coordinator signed",
    );
  }

  private addBatch(stored: StoredSignatureBatch): void {
    const key = stored.key ?? "";
    const valid =
      stored.batch !== undefined &&
      stored.signature !== undefined &&
      this.verifier.verify(key, stored.data, stored.signature);
    if (!valid) {
      this.count(this.verifier.trusts(key) ? "bad-signature" : "untrusted-key");
      this.logger.warn(
        { streamSeq: stored.streamSeq, key },
        "a signature batch that does not verify against the trusted coordinator keys",
      );
      return;
    }
    this.runs.note(key, stored.batch!, stored.storedAt);
    for (const [seq, hash] of stored.batch!.records) {
      const cover = this.covered.get(seq);
      if (cover === undefined) this.covered.set(seq, { hashes: [hash], at: Date.now() });
      else if (!cover.hashes.includes(hash)) cover.hashes.push(hash);
    }
  }

  /** Follow the signature stream from one grace before this start, reopening when it fails. */
  private async follow(): Promise<void> {
    const stream = signatureStreamName(this.bus.subjects);
    while (!this.stopped) {
      try {
        const consumer = await this.bus.js.consumers.get(stream, {
          deliver_policy: DeliverPolicy.StartTime,
          opt_start_time: new Date(this.startedAt - this.graceMs).toISOString(),
        });
        const messages = await consumer.consume({ max_messages: 256 });
        this.stopFollowing = () => messages.stop();
        if (this.stopped) messages.stop();
        for await (const msg of messages) {
          this.addBatch(
            toStoredSignatureBatch(
              msg.seq,
              msg.data,
              msg.headers,
              Math.floor(msg.info.timestampNanos / 1e6),
            ),
          );
        }
      } catch (error) {
        if (!isStreamNotFound(error))
          this.logger.warn({ err: error }, "following coordinator signatures failed, retrying");
      }
      if (!this.stopped) await this.pause(REOPEN_MS);
    }
  }

  /** A wait that stop() cuts short and that never keeps the process alive. */
  private pause(ms: number): Promise<void> {
    return sleep(ms, { unref: true, onWake: (wake) => (this.wake = wake) });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.stopFollowing?.();
    this.wake?.();
    // A consumer in the middle of a reset may never end its iterator: bounded, then left behind.
    await Promise.race([this.following, this.pause(REOPEN_MS)]);
  }
}
