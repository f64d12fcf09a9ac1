/**
 * What the active sealer read and has not sealed yet, and the cursor it seals from. flush() seals
 * the head of the buffer as one batch (fewer records when they outgrow one message), appends it,
 * then moves the cursor and the session heads on. Flushes never overlap, and none follows a failed
 * one until the next round begins: a batch stored whose heads never reached KV must stay past the
 * `_through` mark (heads.ts), and the next batch's heads would move the mark over it.
 */
import type { SealerSignatureCheck } from "./signature-check.js";
import { HookbusError } from "../foundation/errors.js";
import { bytesHash } from "../log/seal/hash.js";
import { appendBatch, type AppendTarget } from "./append.js";
import { buildBatch, type PendingRecord } from "./build-batch.js";
import type { SessionHeads } from "./heads.js";
import type { SealLag } from "./lag.js";
import type { SealState } from "./seal-state.js";

export interface BatcherOptions extends AppendTarget {
  /** This sealer's id, recorded in each batch. */
  id: string;
  heads: SessionHeads;
  signatures: SealerSignatureCheck | undefined;
  /** Records per batch at most. */
  maxBatch: number;
  /** Bytes per batch at most (under the server's max_payload). */
  maxBatchBytes: number;
}

export class SealBatcher {
  /** Where the next batch starts (undefined: no round started yet). */
  state: SealState | undefined;
  /** Records read and not sealed yet, in log order. */
  readonly buffer: PendingRecord[] = [];
  /** Records the log consumer last reported still waiting on the server. */
  lastPending = 0;
  /** Batches this process stored. */
  batches = 0;
  private flushing: Promise<void> = Promise.resolve();
  /** What failed a flush of this round (undefined: nothing): later flushes fail with it. */
  private failed: Error | undefined;
  private readonly encoder = new TextEncoder();

  constructor(private readonly options: BatcherOptions) {}

  /** A round starts from `state`, with nothing read yet. */
  begin(state: SealState): void {
    this.state = state;
    this.buffer.length = 0;
    this.failed = undefined;
  }

  add(record: PendingRecord, pending: number): void {
    this.buffer.push(record);
    this.lastPending = pending;
  }

  /** Seal what is buffered (up to maxBatch); rejects at once after a failed flush of this round. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => {
      // A flush queued behind a failed one would seal from what that one left: a cursor moved on
      // while KV missed its heads (the persist failed), so its own heads would mark them written.
      if (this.failed !== undefined) throw this.failed;
      return this.sealHead();
    });
    // The queue itself goes on (settled() resolves; the caller handles the failure), remembering it.
    this.flushing = run.catch((error: unknown) => {
      this.failed ??=
        error instanceof Error
          ? error
          : new HookbusError("HOOKBUS_INTERNAL", "a seal flush failed", {}, error);
    });
    return run;
  }

  /** Resolves once no flush runs (whether the last one failed or not). */
  settled(): Promise<void> {
    return this.flushing;
  }

  lag(active: boolean): SealLag {
    const oldest = this.buffer[0];
    return {
      records: this.buffer.length + this.lastPending,
      seconds: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest.storedAt) / 1000),
      sealedSeq: this.state === undefined ? 0 : this.state.nextSeq - 1,
      batches: this.batches,
      active,
    };
  }

  private async sealHead(): Promise<void> {
    const state = this.state;
    if (state === undefined || this.buffer.length === 0) return;
    const t0 = Date.now();
    const { items, batch, heads, data } = await this.fit(state);
    const t1 = Date.now();
    const streamSeq = await appendBatch(this.options, data, state);
    const t2 = Date.now();
    this.buffer.splice(0, items.length);
    this.state = { index: batch.index, hash: bytesHash(data), nextSeq: batch.toSeq + 1, streamSeq };
    this.batches++;
    this.options.signatures?.sealed(items);
    for (const [session, head] of heads) this.options.heads.remember(session, head);
    // A failure here (or a kill) leaves KV behind: the next start repairs it from the stream.
    await this.options.heads.persist(heads, batch.index);
    this.options.logger.debug(
      {
        batch: batch.index,
        records: items.length,
        buildMs: t1 - t0,
        appendMs: t2 - t1,
        persistMs: Date.now() - t2,
      },
      "sealed",
    );
  }

  /** The batch of the buffer's head, halved until its JSON fits one message. */
  private async fit(state: SealState) {
    const { heads, id, bus } = this.options;
    const context = { namespace: bus.subjects.namespace, heads, sealer: id };
    let items = this.buffer.slice(0, this.options.maxBatch);
    let built = await buildBatch(items, state, context);
    let data = this.encoder.encode(JSON.stringify(built.batch));
    // Long session ids can make a batch outgrow one message: seal fewer records at a time.
    while (data.length > this.options.maxBatchBytes && items.length > 1) {
      items = items.slice(0, Math.ceil(items.length / 2));
      built = await buildBatch(items, state, context);
      data = this.encoder.encode(JSON.stringify(built.batch));
    }
    return { items, batch: built.batch, heads: built.heads, data };
  }
}
