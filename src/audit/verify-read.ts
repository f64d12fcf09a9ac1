/**
 * What `audit verify` reads, as streams with bounded memory: the log's messages (exact bytes, and
 * the record decoded for the content checks) and the seal stream's batches, each up to where the
 * stream ended when verification started, so a log being written still verifies to an end.
 */
import { DeliverPolicy, type JsMsg, type StreamInfo } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { deleteOrderedConsumer, isStreamNotFound } from "../bus/streams.js";
import { sealStreamName } from "../log/seal/batch.js";
import { toStoredBatch, type StoredBatch } from "../log/seal/stream.js";
import {
  RecordSignerHeader,
  RecordSignerRunHeader,
  signatureStreamName,
  toStoredSignatureBatch,
  type StoredSignatureBatch,
} from "../log/sign/batch.js";

export interface LogItem {
  seq: number;
  subject: string;
  /** The message body exactly as stored (what the seal's chain hashes). */
  data: Uint8Array;
  /** When the log stored it (epoch ms: the server's timestamp, not the record's own claim). */
  storedAt: number;
  /** Its `Hookbus-Signer` header: the coordinator key whose batch is to list it. */
  signer?: string;
  /** Its `Hookbus-Signer-Run` header: the signer's run (epoch) whose batch is to list it. */
  signerRun?: string;
  /** The decoded record (not validated), or why it could not be decoded. */
  record?: unknown;
  unreadable?: string;
}

/** Where each stream ended when reading started (0: empty or absent). */
export interface ReadBounds {
  logFirstSeq: number;
  logLastSeq: number;
  sealLastSeq: number;
  /**
   * Read before the log's: a coordinator appends a batch only after the log stored every record
   * it lists, so every sequence a batch up to here lists was in the log when its end was read. A
   * listed sequence beyond `logLastSeq` was therefore removed, never "not yet stored".
   */
  signatureLastSeq: number;
  /** The signature stream's first sequence (above 1: batches before it are gone). */
  signatureFirstSeq: number;
}

export async function readBounds(bus: Bus): Promise<ReadBounds> {
  const sigs = await streamInfoIfAny(bus, signatureStreamName(bus.subjects));
  const seals = await streamInfoIfAny(bus, sealStreamName(bus.subjects));
  const log = await bus.jsm.streams.info(bus.subjects.logStream);
  return {
    logFirstSeq: log.state.first_seq,
    logLastSeq: log.state.last_seq,
    sealLastSeq: seals?.state.last_seq ?? 0,
    signatureLastSeq: sigs?.state.last_seq ?? 0,
    signatureFirstSeq: sigs?.state.first_seq ?? 0,
  };
}

/**
 * A stream's info, undefined when it does not exist (no sealer or signer ever ran). Any other
 * failure is thrown: reading it as "no seals" would report sealed records as unsealed.
 */
async function streamInfoIfAny(bus: Bus, name: string): Promise<StreamInfo | undefined> {
  try {
    return await bus.jsm.streams.info(name);
  } catch (error) {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  }
}

async function* readStream(
  bus: Bus,
  stream: string,
  filter: string | undefined,
  lastSeq: number,
): AsyncGenerator<JsMsg> {
  if (lastSeq === 0) return;
  const consumer = await bus.js.consumers.get(stream, {
    ...(filter === undefined ? {} : { filter_subjects: filter }),
    deliver_policy: DeliverPolicy.All,
  });
  try {
    if ((await consumer.info(true)).num_pending === 0) return;
    const messages = await consumer.consume({ max_messages: 256 });
    try {
      for await (const msg of messages) {
        if (msg.seq > lastSeq) return;
        yield msg;
        if (msg.info.pending === 0 || msg.seq >= lastSeq) return;
      }
    } finally {
      messages.stop();
    }
  } finally {
    await deleteOrderedConsumer(consumer, bus.logger);
  }
}

/** The log's messages matching `filter` (a subject filter), in stream order, decoded. */
export async function* readLogItems(
  bus: Bus,
  filter: string,
  lastSeq: number,
): AsyncGenerator<LogItem> {
  for await (const msg of readStream(bus, bus.subjects.logStream, filter, lastSeq)) {
    const item: LogItem = {
      seq: msg.seq,
      subject: msg.subject,
      data: msg.data,
      storedAt: Math.floor(msg.info.timestampNanos / 1e6),
    };
    const signer = msg.headers?.get(RecordSignerHeader);
    if (signer !== undefined && signer !== "") item.signer = signer;
    const run = msg.headers?.get(RecordSignerRunHeader);
    if (run !== undefined && run !== "") item.signerRun = run;
    try {
      item.record = await bus.codec.decodeMessage(msg);
    } catch (error) {
      item.unreadable = String((error as Error)?.message ?? error);
    }
    yield item;
  }
}

/** Every seal batch, in order, as stored. */
export async function* readSealBatches(bus: Bus, lastSeq: number): AsyncGenerator<StoredBatch> {
  const stream = sealStreamName(bus.subjects);
  for await (const msg of readStream(bus, stream, undefined, lastSeq)) {
    yield toStoredBatch(
      msg.seq,
      msg.data,
      msg.headers,
      new Date(Math.floor(msg.info.timestampNanos / 1e6)),
    );
  }
}

/** Every coordinator signature batch, in order, as stored. */
export async function* readSignatureBatches(
  bus: Bus,
  lastSeq: number,
): AsyncGenerator<StoredSignatureBatch> {
  const stream = signatureStreamName(bus.subjects);
  for await (const msg of readStream(bus, stream, undefined, lastSeq)) {
    yield toStoredSignatureBatch(
      msg.seq,
      msg.data,
      msg.headers,
      Math.floor(msg.info.timestampNanos / 1e6),
    );
  }
}
