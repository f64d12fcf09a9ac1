/**
 * Signs what this coordinator appended to the log, in micro-batches (docs/security.md, "Signed
 * decisions"). The log writer hands over each stored record (`add`: its sequence, subject and
 * stored bytes, hashed at once, ~1 µs); every `maxRecords` records or `maxDelayMs` after the first
 * unsigned one, whichever comes first, the signer appends one signed batch listing them to
 * `<NS>_SIGNATURES`. One Ed25519 signature then covers many records, so signing costs a fraction
 * of a call's CPU however busy the coordinator is, and every record is covered within a bounded
 * delay (plus the time a failing append is retried).
 *
 * Batches are linked per writer start (`epoch`, `index`, `prev`), so a verifier sees a batch of
 * the run that went missing. Memory is bounded: past `maxPending` unsigned entries the oldest are
 * dropped, counted and logged (their records then verify as `unsigned-record`).
 *
 * Liveness for the crash tail (docs/security.md, "Crash tails"): while it has nothing to sign the
 * signer stores an empty batch (a heartbeat) once `heartbeatMs` has passed since its last batch,
 * and a clean stop ends the run with a batch marked `last`. So the run's batches show, within a
 * heartbeat, until when the coordinator lived: records it stored but could not sign before a kill
 * lie just after its last batch, and verify names them `crash-tail` instead of forged.
 */
import { headers as natsHeaders, nuid } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { backoffMs } from "../foundation/backoff.js";
import { beforeDeadline } from "../foundation/deadline.js";
import { sleep } from "../foundation/time.js";
import {
  BatchKeyHeader,
  BatchSignatureHeader,
  SIGNATURE_VERSION,
  SIGNER_HEARTBEAT_MS,
  ensureSignatureStream,
  recordHash,
  signatureSubject,
  type SignatureBatch,
} from "../log/sign/batch.js";
import type { RecordSigningKey } from "../log/sign/keys.js";
import { bytesHash } from "../log/seal/hash.js";

export interface RecordSignerOptions {
  bus: Bus;
  key: RecordSigningKey;
  coordinatorId: string;
  logger: Logger;
  /** Records per batch at most (default 256). */
  maxRecords?: number;
  /** A record waits at most this long for its batch to be started (default 200 ms). */
  maxDelayMs?: number;
  /** Unsigned entries kept while batches cannot be stored (default 100 000). */
  maxPending?: number;
  /** Replicas of `<NS>_SIGNATURES` when this coordinator creates it. */
  replicas?: number;
  /** With nothing to sign, an empty batch this long after the last one (default 5 s). */
  heartbeatMs?: number;
}

/** How long stop() keeps trying to store the last batches. */
const STOP_WAIT_MS = 5000;
const RETRY = { firstMs: 50, capMs: 1000 };

export class RecordSigner {
  readonly publicKey: string;
  /** This run: on every record it signs (`Hookbus-Signer-Run`) and every batch. */
  readonly epoch = nuid.next();
  private readonly maxRecords: number;
  private readonly maxDelayMs: number;
  private readonly maxPending: number;
  private readonly encoder = new TextEncoder();
  private entries: [number, string][] = [];
  private index = 0;
  private prev: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private stopped = false;
  private queued = false;
  private dropped = 0;
  private lastStoredAt = Date.now();
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(private readonly options: RecordSignerOptions) {
    this.publicKey = options.key.publicKey;
    this.maxRecords = options.maxRecords ?? 256;
    this.maxDelayMs = options.maxDelayMs ?? 200;
    this.maxPending = options.maxPending ?? 100_000;
  }

  static async start(options: RecordSignerOptions): Promise<RecordSigner> {
    await ensureSignatureStream(options.bus, options.replicas ?? 1);
    options.logger.info({ signingKey: options.key.publicKey }, "signing the records it writes");
    const signer = new RecordSigner(options);
    const every = options.heartbeatMs ?? SIGNER_HEARTBEAT_MS;
    signer.heartbeat = setInterval(() => signer.beat(every), every / 4).unref();
    return signer;
  }

  /** An empty batch when nothing was stored for `everyMs`: the run is alive (its crash window). */
  private beat(everyMs: number): void {
    if (this.stopped || this.queued || this.entries.length > 0) return;
    if (Date.now() - this.lastStoredAt < everyMs) return;
    this.lastStoredAt = Date.now(); // one heartbeat in flight at a time
    this.afterFlushes(false).catch((error: unknown) =>
      this.options.logger.error({ err: error }, "signature heartbeat not stored"),
    );
  }

  /**
   * An empty batch (a heartbeat, or the run's `last`), in line behind every batch before it:
   * two batches stored at once would both take the same index.
   */
  private afterFlushes(last: boolean): Promise<void> {
    const run = this.flushing.then(() =>
      this.entries.length === 0 ? this.store([], last) : undefined,
    );
    this.flushing = run.catch(() => {});
    return run;
  }

  /** Records dropped unsigned because batches could not be stored (for metrics and tests). */
  get droppedRecords(): number {
    return this.dropped;
  }

  /** A record the log stored at `seq` with exactly these subject and bytes. */
  add(seq: number, subject: string, data: Uint8Array): void {
    this.entries.push([seq, recordHash(subject, data)]);
    if (this.entries.length > this.maxPending) {
      const over = this.entries.length - this.maxPending;
      this.entries.splice(0, over);
      this.dropped += over;
      this.options.logger.error(
        { dropped: this.dropped },
        "signature batches cannot be stored: records dropped unsigned",
      );
    }
    if (this.entries.length >= this.maxRecords) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs);
  }

  /** Sign and store what is pending; batches never overlap, and stay in order. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    // One flush waiting behind the running one is enough: it takes whatever is pending then.
    if (this.queued) return this.flushing;
    this.queued = true;
    const run = this.flushing.then(async () => {
      this.queued = false;
      while (this.entries.length > 0) {
        const records = this.entries.slice(0, this.maxRecords);
        await this.store(records);
        // Entries may have been dropped meanwhile: remove exactly those just stored.
        const at = this.entries.indexOf(records[0]!);
        if (at >= 0) this.entries.splice(at, records.length);
        if (this.stopped) continue;
        if (this.entries.length < this.maxRecords) break;
      }
      if (this.entries.length > 0)
        this.timer ??= setTimeout(() => void this.flush(), this.maxDelayMs);
    });
    this.flushing = run.catch((error: unknown) =>
      this.options.logger.error({ err: error }, "signature batch not stored"),
    );
    return this.flushing;
  }

  /** Append one batch, retried (with backoff) until stored, or given up after stop(). */
  private async store(records: [number, string][], last = false): Promise<void> {
    const { bus, key, coordinatorId } = this.options;
    const batch: SignatureBatch = {
      v: SIGNATURE_VERSION,
      namespace: bus.subjects.namespace,
      coordinator: coordinatorId,
      epoch: this.epoch,
      index: this.index + 1,
      prev: this.prev,
      records,
      ...(last ? { last: true as const } : {}),
      signedAt: new Date().toISOString(),
    };
    const data = this.encoder.encode(JSON.stringify(batch));
    const hdrs = natsHeaders();
    hdrs.set(BatchSignatureHeader, key.sign(data));
    hdrs.set(BatchKeyHeader, key.publicKey);
    // The message id makes a retry whose first answer was lost store the batch once.
    const msgID = `sig.${this.epoch}.${batch.index}`;
    for (let attempt = 0; ; attempt++) {
      try {
        await bus.js.publish(signatureSubject(bus.subjects), data, {
          headers: hdrs,
          msgID,
          timeout: 5000,
        });
        this.index = batch.index;
        this.prev = bytesHash(data);
        this.lastStoredAt = Date.now();
        return;
      } catch (error) {
        if (this.stopped && attempt > 2) throw error;
        this.options.logger.warn(
          { err: error, attempt },
          "signature batch append failed, retrying",
        );
        await sleep(backoffMs(attempt, RETRY));
      }
    }
  }

  /** Store what is pending and the run's `last` batch (bounded by STOP_WAIT_MS), then stop. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    const final = this.flush().then(() => this.afterFlushes(true));
    await beforeDeadline(
      final,
      Date.now() + STOP_WAIT_MS,
      "HOOKBUS_LOG_UNAVAILABLE",
      () => `the last signature batches were not stored within ${STOP_WAIT_MS} ms`,
    ).catch((error: unknown) =>
      this.options.logger.error(
        { err: error, pending: this.entries.length },
        "records left unsigned",
      ),
    );
  }
}
