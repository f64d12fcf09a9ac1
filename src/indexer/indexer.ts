/**
 * The indexer: a durable JetStream pull consumer of the log that projects every record into
 * PostgreSQL. Several indexers may share the consumer (the server hands each message to one of
 * them); a message is acked only after the transaction holding its rows committed, so a killed
 * indexer loses nothing (the server redelivers after `ackWaitMs`) and a redelivered record is
 * written once (the rows are keyed by stream sequence).
 */
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { Bus } from "../bus/bus.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../foundation/errors.js";
import { assertLogExists } from "../log/reader.js";
import {
  consumerMismatchError,
  durableMismatches,
  type DurableShape,
} from "../bus/durable-check.js";
import { sleep } from "../foundation/time.js";
import { assertIndexSchema } from "./migrate.js";
import type { PgPool } from "./pg.js";
import { invalidProjection, projectRecord, type Projection } from "./projection.js";
import { writeBatchIsolating } from "./writer.js";
import { backoffMs } from "../foundation/backoff.js";
import { isConsumerNotFound } from "../bus/streams.js";

export interface IndexerOptions {
  bus: Bus;
  pool: PgPool;
  /** Durable consumer name shared by every indexer of the namespace (default `<ns>-indexer`). */
  consumer?: string;
  /** Records per transaction (default 1000, at most 10,000). */
  batchSize?: number;
  /**
   * Batches written at once, each in its own transaction (default 2, at most 16). The pool needs
   * that many connections.
   */
  writers?: number;
  /** A partial batch is written after this long (default 100 ms). */
  flushIntervalMs?: number;
  /** Unacked messages are redelivered after this long (default 30 s; set when the consumer is created). */
  ackWaitMs?: number;
}

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
}

export interface IndexLag {
  /** Records stored in the log and not yet indexed (pending + unacked). */
  records: number;
  /** Age of the oldest record not yet indexed (0 when caught up). */
  seconds: number;
}

export interface Indexer {
  readonly consumer: string;
  readonly stats: Readonly<IndexerStats>;
  /** How far the index is behind the log (one consumer info, plus one get when behind). */
  lag(): Promise<IndexLag>;
  /** How its durable differs from what the indexer creates (empty: it is the indexer's). */
  consumerMismatches(): Promise<string[]>;
  /** Whether the last write of some batch failed and has not succeeded since (it is retried). */
  writeFailing(): boolean;
  /** Whether stop() was called or the indexer ended. */
  stopped(): boolean;
  /** Stops consuming, writes and acks what it holds, and resolves. */
  stop(): Promise<void>;
  /** Resolves when the indexer stopped (after stop(), or a fatal error: rejects with it). */
  readonly done: Promise<void>;
}

const MAX_BATCH = 10_000;
const MAX_WRITERS = 16;

/** The indexer's durable: the whole log, every record acked once indexed. */
export const INDEXER_DURABLE_SHAPE: DurableShape = {
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
};

/** How the durable `name` on the log differs from the indexer's (empty: it is the indexer's). */
export async function indexerConsumerMismatches(bus: Bus, name: string): Promise<string[]> {
  const info = await bus.jsm.consumers.info(bus.subjects.logStream, name);
  return durableMismatches(INDEXER_DURABLE_SHAPE, info.config);
}

export function defaultIndexerConsumer(bus: Bus): string {
  return `${bus.subjects.namespace}-indexer`;
}

async function ensureConsumer(bus: Bus, name: string, ackWaitMs: number, batch: number) {
  const stream = bus.subjects.logStream;
  try {
    await bus.jsm.consumers.info(stream, name);
    return await assertIndexerShape(bus, name);
  } catch (error) {
    if (error instanceof HookbusError) throw error;
    // Not there yet: create it (another indexer may win the race; then it exists). Any other
    // failure (no permission, no JetStream) is not "absent".
    if (!isConsumerNotFound(error)) throw error;
  }
  try {
    await bus.jsm.consumers.add(stream, {
      durable_name: name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(ackWaitMs),
      // Bounds what all indexers together hold unacked.
      max_ack_pending: Math.max(4 * batch, 1000),
      max_deliver: -1,
    });
  } catch (error) {
    await bus.jsm.consumers.info(stream, name).catch(() => {
      throw error;
    });
  }
  // Whoever created it (this indexer, another one, or someone who got there first) decided it.
  await assertIndexerShape(bus, name);
}

async function assertIndexerShape(bus: Bus, name: string): Promise<void> {
  const found = await indexerConsumerMismatches(bus, name);
  if (found.length > 0) throw consumerMismatchError(bus.subjects.logStream, name, found);
}

/** How far the durable consumer `consumer` is behind the log. */
export async function indexLag(
  bus: Bus,
  consumer = defaultIndexerConsumer(bus),
): Promise<IndexLag> {
  const stream = bus.subjects.logStream;
  const info = await bus.jsm.consumers.info(stream, consumer);
  const records = info.num_pending + info.num_ack_pending;
  if (records === 0) return { records: 0, seconds: 0 };
  // null: the oldest unindexed record was removed by the stream's limits, so it has no age.
  const oldest = await bus.jsm.streams.getMessage(stream, {
    seq: info.ack_floor.stream_seq + 1,
  });
  const seconds = oldest === null ? 0 : Math.max(0, (Date.now() - oldest.time.getTime()) / 1000);
  return { records, seconds };
}

/** Whether the message's body is the record's JSON itself (not gzip, not a blob reference). */
function plainJson(msg: JsMsg): boolean {
  const encoding = msg.headers?.get(Header.Encoding);
  return encoding === undefined || encoding === "" || encoding === "json";
}

async function project(bus: Bus, msg: JsMsg): Promise<Projection> {
  const storedAt = new Date(Math.floor(msg.info.timestampNanos / 1e6));
  let address;
  try {
    address = bus.subjects.parseAudit(msg.subject);
  } catch {
    address = { agentId: "", sessionKey: "", hook: "", kind: "error" as const };
  }
  const stored = { seq: msg.seq, subject: msg.subject, storedAt, address };
  try {
    const decoded = await bus.codec.decodeMessage(msg);
    return projectRecord(stored, decoded, plainJson(msg) ? msg.string() : undefined);
  } catch (error) {
    const code = (error as { code?: string })?.code ?? "HOOKBUS_BAD_MESSAGE";
    return invalidProjection(stored, `${code}: ${String((error as Error)?.message ?? error)}`);
  }
}

export async function startIndexer(options: IndexerOptions): Promise<Indexer> {
  const { bus, pool } = options;
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `batchSize must be 1-${MAX_BATCH}, got ${String(batchSize)}`,
      { argument: "batchSize" },
    );
  const writers = options.writers ?? 2;
  if (!Number.isSafeInteger(writers) || writers < 1 || writers > MAX_WRITERS)
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `writers must be 1-${MAX_WRITERS}, got ${String(writers)}`,
      { argument: "writers" },
    );
  const flushIntervalMs = options.flushIntervalMs ?? 100;
  const consumerName = options.consumer ?? defaultIndexerConsumer(bus);
  await assertIndexSchema(pool);
  await assertLogExists(bus);
  await ensureConsumer(bus, consumerName, options.ackWaitMs ?? 30_000, (writers + 1) * batchSize);
  const consumer = await bus.js.consumers.get(bus.subjects.logStream, consumerName);
  const namespace = bus.subjects.namespace;
  const logger = bus.logger.child({ component: "indexer", consumer: consumerName });
  const stats: IndexerStats = {
    indexed: 0,
    duplicates: 0,
    invalid: 0,
    batches: 0,
    writeFailures: 0,
  };

  let stopping = false;
  let ended = false;
  /** Batches whose last write attempt failed. */
  let failingBatches = 0;
  let pending: { msg: JsMsg; projection: Projection }[] = [];
  let firstAt = 0;
  // Batches being written, each in its own transaction on its own connection; a message is
  // acked when its batch committed, whatever the order the batches finish in.
  const writing = new Set<Promise<void>>();

  async function write(batch: typeof pending): Promise<void> {
    // In sequence order: two transactions inserting overlapping keys (a redelivery racing its
    // first delivery) then lock them in the same order instead of deadlocking.
    batch.sort((a, b) => a.msg.seq - b.msg.seq);
    const projections = batch.map((b) => b.projection);
    let failing = false;
    const setFailing = (now: boolean) => {
      if (now !== failing) failingBatches += now ? 1 : -1;
      failing = now;
    };
    for (let attempt = 0; ; attempt++) {
      try {
        const { added, rejected } = await writeBatchIsolating(pool, namespace, projections);
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
        if (stopping && attempt >= 2) {
          setFailing(false);
          return;
        }
        await sleep(backoffMs(attempt, { firstMs: 100, capMs: 5000 }));
      }
    }
    for (const { msg } of batch) msg.ack();
  }

  /** Starts writing what is pending (without waiting for it). */
  function flush(): void {
    if (pending.length === 0) return;
    const batch = pending;
    pending = [];
    const written: Promise<void> = write(batch).finally(() => writing.delete(written));
    writing.add(written);
  }

  const timer = setInterval(
    () => {
      // A partial batch waits at most flushIntervalMs, unless every writer is busy (then the
      // loop below flushes it as soon as one is free).
      if (pending.length > 0 && Date.now() - firstAt >= flushIntervalMs && writing.size < writers)
        flush();
    },
    Math.max(10, Math.floor(flushIntervalMs / 2)),
  );

  let messages: ConsumerMessages | undefined;
  async function run(): Promise<void> {
    messages = await consumer.consume({
      max_messages: Math.min(MAX_BATCH, (writers + 1) * batchSize),
    });
    for await (const msg of messages) {
      // Decode first, then add to the batch that is pending NOW: the timer may have flushed
      // the batch that was pending when decoding started (a slow blob read), and a record added
      // to a batch already written would be neither written nor acked.
      const projection = await project(bus, msg);
      if (pending.length === 0) firstAt = Date.now();
      pending.push({ msg, projection });
      // Caught up (nothing more waiting) or a full batch: write now.
      if (pending.length >= batchSize || msg.info.pending === 0) flush();
      // Back-pressure: with every writer busy, wait for one (the consumer buffers at most
      // max_messages meanwhile).
      while (writing.size >= writers) await Promise.race(writing);
      if (stopping) break;
    }
  }

  const done = run().finally(async () => {
    clearInterval(timer);
    flush();
    await Promise.all(writing);
    ended = true;
  });
  logger.info({ batchSize, writers }, "indexer started");
  return {
    consumer: consumerName,
    stats,
    lag: () => indexLag(bus, consumerName),
    consumerMismatches: () => indexerConsumerMismatches(bus, consumerName),
    writeFailing: () => failingBatches > 0,
    stopped: () => stopping || ended,
    async stop() {
      stopping = true;
      messages?.stop();
      await done.catch(() => {});
    },
    done,
  };
}
