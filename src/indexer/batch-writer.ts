/**
 * The indexer's write side: records taken from the consumer gather into batches, each batch is
 * written in its own transaction (at most `writers` at once), and a message is acked only after
 * the transaction holding its rows committed.
 */
import type { JsMsg } from "@nats-io/jetstream";
import type { Logger } from "pino";
import { backoffMs } from "../foundation/backoff.js";
import { sleep } from "../foundation/time.js";
import type { PgPool } from "../audit/pg/pool.js";
import type { Projection } from "./projection.js";
import { writeBatchIsolating } from "./writer.js";

export interface IndexerStats {
  /** Records this indexer wrote (new rows). */
  indexed: number;
  /** Records received again that were already in the index (redeliveries, replays). */
  duplicates: number;
  /** Records that could not be decoded, indexed as `invalid`. */
  invalid: number;
  batches: number;
  /** Failed batch writes (each retried). */
  writeFailures: number;
  /**
   * Records the shared durable held unacked when this indexer started, which it had the server
   * redeliver at once (a dead indexer's, or a live peer's in flight: those come back as
   * `duplicates`).
   */
  reclaimed: number;
}

export interface BatchWriterOptions {
  pool: PgPool;
  namespace: string;
  logger: Logger;
  batchSize: number;
  writers: number;
  flushIntervalMs: number;
}

type Pending = { msg: JsMsg; projection: Projection }[];

export class BatchWriter {
  readonly stats: IndexerStats = {
    indexed: 0,
    duplicates: 0,
    invalid: 0,
    batches: 0,
    writeFailures: 0,
    reclaimed: 0,
  };
  /** Set by stop(): a failing write then gives up after a few attempts (unacked: redelivered). */
  stopping = false;
  /** Batches whose last write attempt failed. */
  private failingBatches = 0;
  /**
   * Whether the next batch is tried as all new (writer.ts, writeNewBatch): off once a batch
   * held a stored record (a replay, a restart's redeliveries, a peer's), so a run of them is not
   * written twice over; on again after a batch that held none.
   */
  private expectNew = true;
  private pending: Pending = [];
  private firstAt = 0;
  // Batches being written, each in its own transaction on its own connection; a message is
  // acked when its batch committed, whatever the order the batches finish in.
  private readonly writing = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: BatchWriterOptions) {
    const { flushIntervalMs, writers } = options;
    this.timer = setInterval(
      () => {
        // A partial batch waits at most flushIntervalMs, unless every writer is busy (then
        // waitForWriter's caller flushes it as soon as one is free).
        if (
          this.pending.length > 0 &&
          Date.now() - this.firstAt >= flushIntervalMs &&
          this.writing.size < writers
        )
          this.flush();
      },
      Math.max(10, Math.floor(flushIntervalMs / 2)),
    );
  }

  /**
   * Adds a decoded record to the batch that is pending NOW, and writes it when it is full or the
   * consumer caught up (`caughtUp`: nothing more waiting).
   */
  add(msg: JsMsg, projection: Projection, caughtUp: boolean): void {
    if (this.pending.length === 0) this.firstAt = Date.now();
    this.pending.push({ msg, projection });
    if (this.pending.length >= this.options.batchSize || caughtUp) this.flush();
  }

  /** Back-pressure: with every writer busy, waits for one to finish. */
  async waitForWriter(): Promise<void> {
    while (this.writing.size >= this.options.writers) await Promise.race(this.writing);
  }

  writeFailing(): boolean {
    return this.failingBatches > 0;
  }

  /** Stops the timer, writes what is pending and waits for every write. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    await Promise.all(this.writing);
  }

  /** Starts writing what is pending (without waiting for it). */
  private flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    const written: Promise<void> = this.write(batch).finally(() => this.writing.delete(written));
    this.writing.add(written);
  }

  private async write(batch: Pending): Promise<void> {
    const { pool, namespace, logger } = this.options;
    const stats = this.stats;
    // In sequence order: two transactions inserting overlapping keys (a redelivery racing its
    // first delivery) then lock them in the same order instead of deadlocking.
    batch.sort((a, b) => a.msg.seq - b.msg.seq);
    const projections = batch.map((b) => b.projection);
    let failing = false;
    const setFailing = (now: boolean) => {
      if (now !== failing) this.failingBatches += now ? 1 : -1;
      failing = now;
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const asNew = this.expectNew && !batch.some((b) => b.msg.info.redelivered);
        const { added, rejected } = await writeBatchIsolating(pool, namespace, projections, {
          asNew,
        });
        this.expectNew = added === batch.length;
        setFailing(false);
        stats.indexed += added;
        stats.duplicates += batch.length - added;
        stats.invalid += projections.filter((p) => p.record.kind === "invalid").length + rejected;
        stats.batches++;
        break;
      } catch (error) {
        stats.writeFailures++;
        setFailing(true);
        // Not acked: if this indexer dies now, the server redelivers to another one.
        logger.warn({ err: error, records: batch.length, attempt }, "index write failed; retrying");
        if (this.stopping && attempt >= 2) {
          setFailing(false);
          return;
        }
        await sleep(backoffMs(attempt, { firstMs: 100, capMs: 5000 }));
      }
    }
    for (const { msg } of batch) msg.ack();
  }
}
