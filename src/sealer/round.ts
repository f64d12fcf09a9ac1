/**
 * One round of the active sealer: from the seal stream's last batch, read the log in order into
 * the batcher and seal it, renewing the lease as it goes, until the lease is lost, the log
 * consumer fails or stalls, or the sealer stops.
 */
import { DeliverPolicy, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { deleteOrderedConsumer } from "../bus/streams.js";
import { HookbusError } from "../foundation/errors.js";
import { RecordSignerHeader, RecordSignerRunHeader } from "../log/sign/batch.js";
import type { SealBatcher } from "./batcher.js";
import type { SessionHeads } from "./heads.js";
import type { SealerLease } from "./lease.js";
import { loadSealState } from "./seal-state.js";

/** Silence after which an idle consumer is checked against the log (see checkStalled). */
const STALL_MS = 2000;

export interface RoundOptions {
  bus: Bus;
  lease: SealerLease;
  heads: SessionHeads;
  batcher: SealBatcher;
  logger: Logger;
  maxBatch: number;
  maxDelayMs: number;
  leaseTtlMs: number;
  /** Whether the sealer is stopping. */
  stopping(): boolean;
  /** Told how to end the round once it reads (stop() calls it), and undefined once it ended. */
  onStoppable(stop: (() => void) | undefined): void;
}

/** Seal from the seal stream's head while this sealer holds the lease; throws what ended it. */
export async function sealWhileActive(options: RoundOptions): Promise<void> {
  const { bus, batcher } = options;
  const state = await loadSealState(bus, options.heads, options.logger);
  batcher.begin(state);
  const consumer = await bus.js.consumers.get(bus.subjects.logStream, {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: state.nextSeq,
  });
  const messages = await consumer.consume({ max_messages: options.maxBatch * 2 });
  const round = new SealRound(options, messages);
  options.onStoppable(() => round.stop());
  try {
    await round.run();
  } finally {
    await round.close();
    await deleteOrderedConsumer(consumer, options.logger);
    options.onStoppable(undefined);
  }
  round.throwFailure();
}

class SealRound {
  private failure: unknown;
  // The read loop is not trusted to end when its consumer is stopped (a consumer in the middle of
  // a reset after a NATS restart may never yield again): a failure or a stop ends this round
  // through `ended` whatever the iterator does.
  private end!: () => void;
  private readonly ended: Promise<void>;
  private lastDelivery = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private renew: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: RoundOptions,
    private readonly messages: ConsumerMessages,
  ) {
    this.ended = new Promise<void>((resolve) => (this.end = resolve));
  }

  stop(): void {
    this.messages.stop();
    this.end();
  }

  async run(): Promise<void> {
    this.lastDelivery = Date.now();
    this.renew = setInterval(() => this.tick(), this.options.leaseTtlMs / 4);
    const reading = this.read();
    // Left behind if `ended` wins: its failure is `failure`'s business, not an unhandled one.
    reading.catch(this.fail);
    await Promise.race([reading, this.ended]);
    clearTimeout(this.timer);
    if (this.failure === undefined) await this.options.batcher.flush().catch(this.fail);
  }

  /** Stop reading; resolves once no flush of this round runs (the next round reads the seal stream). */
  async close(): Promise<void> {
    clearTimeout(this.timer);
    clearInterval(this.renew);
    this.messages.stop();
    await this.options.batcher.settled();
  }

  throwFailure(): void {
    if (this.failure === undefined) return;
    throw this.failure instanceof Error
      ? this.failure
      : new HookbusError("HOOKBUS_INTERNAL", "sealer failed", {}, this.failure);
  }

  private readonly fail = (error: unknown): void => {
    this.failure ??= error;
    this.messages.stop();
    this.end();
  };

  /** Renew the lease; when nothing arrives for a while, check the consumer against the log. */
  private tick(): void {
    const { lease, logger, batcher } = this.options;
    lease.acquire().then(
      (held) => {
        if (!held) this.fail(new HookbusError("HOOKBUS_SEAL_CONFLICT", "lost the sealer lease"));
      },
      (error: unknown) => logger.warn({ err: error }, "lease renewal failed"),
    );
    if (batcher.buffer.length === 0 && Date.now() - this.lastDelivery > STALL_MS) {
      void this.checkStalled();
    }
  }

  /**
   * An ordered consumer may stay silent after a server restart lost it: if the log has moved on
   * while nothing arrives, start over from the seal stream.
   */
  private async checkStalled(): Promise<void> {
    const { bus, batcher, logger } = this.options;
    const last = await bus.jsm.streams
      .info(bus.subjects.logStream)
      .then((i) => i.state.last_seq)
      .catch((error: unknown) => {
        // Not known to have moved on: no restart now; the next tick checks again.
        logger.warn({ err: error }, "could not read the log stream to check a silent consumer");
        return 0;
      });
    const state = batcher.state;
    if (state !== undefined && last >= state.nextSeq && Date.now() - this.lastDelivery > STALL_MS) {
      logger.warn({ nextSeq: state.nextSeq, logLastSeq: last }, "log consumer stalled, restarting");
      this.fail(new HookbusError("HOOKBUS_LOG_UNAVAILABLE", "the sealer's log consumer stalled"));
    }
  }

  private flushSoon(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    return this.options.batcher.flush().catch(this.fail);
  }

  private async read(): Promise<void> {
    const { batcher, maxBatch, maxDelayMs } = this.options;
    for await (const msg of this.messages) {
      if (this.failure !== undefined || this.options.stopping()) break;
      if (batcher.state === undefined || msg.seq < batcher.state.nextSeq) continue;
      const storedAt = Math.floor(msg.info.timestampNanos / 1e6);
      batcher.add(
        { seq: msg.seq, subject: msg.subject, data: msg.data, storedAt, ...signerOf(msg) },
        msg.info.pending,
      );
      this.lastDelivery = Date.now();
      if (batcher.buffer.length >= maxBatch) await this.flushSoon();
      else this.timer ??= setTimeout(() => void this.flushSoon(), maxDelayMs);
    }
  }
}

/** The signer headers a coordinator put on the record (absent: none). */
function signerOf(msg: JsMsg): { signer?: string; signerRun?: string } {
  const signer = msg.headers?.get(RecordSignerHeader) ?? "";
  const signerRun = msg.headers?.get(RecordSignerRunHeader) ?? "";
  return {
    ...(signer === "" ? {} : { signer }),
    ...(signerRun === "" ? {} : { signerRun }),
  };
}
