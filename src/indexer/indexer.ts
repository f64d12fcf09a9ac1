/**
 * The indexer: a durable JetStream pull consumer of the log that projects every record into
 * PostgreSQL. Several indexers may share the consumer (the server hands each message to one of
 * them); a message is acked only after the transaction holding its rows committed, so a killed
 * indexer loses nothing and a redelivered record is written once (the rows are keyed by stream
 * sequence). A starting indexer takes back at once what a dead one held unacked (reclaim.ts),
 * instead of letting it wait out `ackWaitMs`.
 */
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { RECORD_DEPTH_ALLOWANCE, RECORD_SIZE_FACTOR } from "../bus/codec.js";
import { Header } from "../bus/headers.js";
import { HookbusError } from "../foundation/errors.js";
import { assertLogExists } from "../log/reader.js";
import { consumerMismatchError } from "../bus/durable-check.js";
import { assertIndexSchema } from "./migrate.js";
import type { PgPool } from "../audit/pg/pool.js";
import {
  invalidProjection,
  projectBytes,
  projectRecord,
  type Projection,
  type StoredMessage,
} from "./projection.js";
import { BatchWriter, type IndexerStats } from "./batch-writer.js";
import { isConsumerNotFound } from "../bus/streams.js";
import { reclaimUnacked } from "./reclaim.js";
import {
  defaultIndexerConsumer,
  indexerConsumerMismatches,
  indexLag,
  type IndexLag,
} from "./consumer.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

export {
  defaultIndexerConsumer,
  INDEXER_DURABLE_SHAPE,
  indexerConsumerMismatches,
  indexLag,
  type IndexLag,
} from "./consumer.js";

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

export type { IndexerStats } from "./batch-writer.js";

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

/** Whether the message's body is the record's JSON itself (not gzip, not a blob reference). */
function plainJson(msg: JsMsg): boolean {
  const encoding = msg.headers?.get(Header.Encoding);
  return encoding === undefined || encoding === "" || encoding === "json";
}

/**
 * The rows of one stored message. A plain JSON record within the size bound is read in one pass
 * over its text, only the fields the columns need (projectBytes; record-scan.ts says why that is
 * safe), without a promise; any other (gzip, a blob, one the pass cannot read) is decoded in full.
 */
function project(bus: Bus, msg: JsMsg): MaybePromise<Projection> {
  const storedAt = new Date(Math.floor(msg.info.timestampNanos / 1e6));
  let address;
  try {
    address = bus.subjects.parseAudit(msg.subject);
  } catch {
    address = { agentId: "", sessionKey: "", hook: "", kind: "error" as const };
  }
  const stored = { seq: msg.seq, subject: msg.subject, storedAt, address };
  const plain = plainJson(msg);
  // A record is read with the room the log gives records (the codec's record allowance): a call
  // near the depth or size bound makes a record deeper and larger than the call.
  const { limits } = bus.codec;
  if (plain && msg.data.length <= limits.maxEncodedBytes * RECORD_SIZE_FACTOR) {
    const projection = projectBytes(stored, msg.data, limits.maxDepth + RECORD_DEPTH_ALLOWANCE);
    if (projection !== undefined) return projection;
  }
  return decodeAndProject(bus, msg, stored, plain);
}

async function decodeAndProject(
  bus: Bus,
  msg: JsMsg,
  stored: StoredMessage,
  plain: boolean,
): Promise<Projection> {
  try {
    const decoded = await bus.codec.decodeMessage(msg, { record: true });
    return projectRecord(stored, decoded, plain ? msg.string() : undefined);
  } catch (error) {
    const code = (error as { code?: string })?.code ?? "HOOKBUS_BAD_MESSAGE";
    return invalidProjection(stored, `${code}: ${String((error as Error)?.message ?? error)}`);
  }
}

/** Checked settings of one indexer. */
interface IndexerSettings {
  batchSize: number;
  writers: number;
  flushIntervalMs: number;
  consumerName: string;
}

function indexerSettings(options: IndexerOptions): IndexerSettings {
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
  const consumerName = options.consumer ?? defaultIndexerConsumer(options.bus);
  return { batchSize, writers, flushIntervalMs, consumerName };
}

/**
 * Whether nothing more is waiting after `msg`, so its partial batch is written now. A
 * redelivered record never says so: the server counts only records never delivered in
 * `pending`, so every redelivery of a dead indexer's records reads 0 and each was written as a
 * batch of one (about 290 records/s). Redeliveries fill batches; the flush interval writes the
 * last partial one. Nor does a record with more already received behind it.
 */
function caughtUp(msg: JsMsg, messages: ConsumerMessages): boolean {
  return msg.info.pending === 0 && !msg.info.redelivered && messages.getPending() === 0;
}

/**
 * Consumes the log into the writer until the consumer ends or stop() is asked for. Decodes
 * first, then adds to the batch that is pending NOW: the timer may have flushed the batch that
 * was pending when decoding started (a slow blob read), and a record added to a batch already
 * written would be neither written nor acked.
 */
async function consumeInto(
  bus: Bus,
  messages: ConsumerMessages,
  writer: BatchWriter,
): Promise<void> {
  for await (const msg of messages) {
    const projected = project(bus, msg);
    const projection = isPromise(projected) ? await projected : projected;
    // Caught up (nothing more waiting) or a full batch: write now.
    writer.add(msg, projection, caughtUp(msg, messages));
    // Back-pressure: with every writer busy, wait for one (the consumer buffers at most
    // max_messages meanwhile).
    await writer.waitForWriter();
    if (writer.stopping) break;
  }
}

/**
 * What a dead indexer held unacked, redelivered now (reclaim.ts); resolves to how many records
 * that was. Only a speed-up: when it fails, they are redelivered after the ack wait, as before.
 */
async function takeBackUnacked(bus: Bus, consumer: string, logger: Logger): Promise<number> {
  try {
    const reclaimed = await reclaimUnacked(bus, consumer);
    if (reclaimed.unacked > 0)
      logger.info(reclaimed, "took back the records the durable held unacked (redelivered now)");
    return reclaimed.unacked;
  } catch (error) {
    logger.warn(
      { err: error },
      "could not take back the records the durable holds unacked: they are redelivered after its ack wait",
    );
    return 0;
  }
}

export async function startIndexer(options: IndexerOptions): Promise<Indexer> {
  const { bus, pool } = options;
  const { batchSize, writers, flushIntervalMs, consumerName } = indexerSettings(options);
  // Ready checks: the index schema, the log, and a durable of the indexer's shape.
  await assertIndexSchema(pool);
  await assertLogExists(bus);
  await ensureConsumer(bus, consumerName, options.ackWaitMs ?? 30_000, (writers + 1) * batchSize);
  const consumer = await bus.js.consumers.get(bus.subjects.logStream, consumerName);
  const logger = bus.logger.child({ component: "indexer", consumer: consumerName });
  const reclaimed = await takeBackUnacked(bus, consumerName, logger);
  const writer = new BatchWriter({
    pool,
    namespace: bus.subjects.namespace,
    logger,
    batchSize,
    writers,
    flushIntervalMs,
  });
  writer.stats.reclaimed = reclaimed;

  let ended = false;
  let messages: ConsumerMessages | undefined;
  async function run(): Promise<void> {
    messages = await consumer.consume({
      max_messages: Math.min(MAX_BATCH, (writers + 1) * batchSize),
    });
    await consumeInto(bus, messages, writer);
  }

  const done = run().finally(async () => {
    await writer.close();
    ended = true;
  });
  logger.info({ batchSize, writers }, "indexer started");
  return {
    consumer: consumerName,
    stats: writer.stats,
    lag: () => indexLag(bus, consumerName),
    consumerMismatches: () => indexerConsumerMismatches(bus, consumerName),
    writeFailing: () => writer.writeFailing(),
    stopped: () => writer.stopping || ended,
    async stop() {
      writer.stopping = true;
      messages?.stop();
      await done.catch(() => {});
    },
    done,
  };
}
