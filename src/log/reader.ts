/**
 * Reading the log: an async iterable of records, filtered by the server where the subject
 * layout allows (agent, session, hook, outcome kind) and by start time, and bounded: it ends
 * when it has caught up with what the stream held when reading started, so an empty result
 * returns at once instead of waiting. With `follow`, it keeps going until aborted.
 */
import { DeliverPolicy, type Consumer, type JsMsg, type StreamInfo } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { deleteOrderedConsumer } from "../bus/streams.js";
import type { AuditSubjectFilter, ParsedAuditSubject } from "../bus/subjects.js";
import { HookbusError } from "../foundation/errors.js";
import { logRecordValidator } from "./record-validator.js";
import type { LogRecord } from "./record.js";
import { isPromise, type MaybePromise } from "../foundation/hot-path.js";

export interface LogEntry {
  /** Stream sequence. */
  seq: number;
  subject: string;
  /** The subject, decoded: agent, session, hook and record kind. */
  address: ParsedAuditSubject;
  /** When the server stored the record. */
  storedAt: Date;
  record: LogRecord;
}

export interface ReadLogOptions {
  /** Server-side subject filter. */
  filter?: AuditSubjectFilter;
  /** Server-side: start at the first record stored at or after this time. */
  since?: Date;
  /** Stop at the first record stored after this time. */
  until?: Date;
  /** Start at this stream sequence (resuming a tail). */
  fromSeq?: number;
  /** Keep reading new records until `signal` aborts (a tail). */
  follow?: boolean;
  signal?: AbortSignal;
  /** Filled in while reading: what the server was asked for and how much it delivered. */
  stats?: ReadLogStats;
  /**
   * Told of each record that cannot be decoded or does not match the record schema
   * (HOOKBUS_BAD_RECORD, `details.seq`); the read skips it and goes on. Default: a warning in
   * the bus's log. Either way the sequence is counted in `stats.badRecords`.
   */
  onBadRecord?: (error: HookbusError) => void;
  /** A bounded read fetches this many records at a time (default READ_BATCH, at most MAX_READ_BATCH). */
  batch?: number;
  /** How long one batch may take (default READ_BATCH_DEADLINE_MS); see HOOKBUS_LOG_READ_TIMEOUT. */
  batchDeadlineMs?: number;
}

/** How much of the log a read touched (shows that subject filters are applied by the server). */
export interface ReadLogStats {
  /** The subject filter the server applied. */
  filterSubject?: string;
  /** Records matching the filter (and start) that the server had when the read started. */
  pending?: number;
  /** Messages the server delivered to this reader. */
  delivered: number;
  /** Sequences of the records skipped because they could not be read (the first MAX_BAD_SEQS). */
  badRecords?: number[];
  /** How many records were skipped, all told. */
  badRecordCount?: number;
}

/** Skipped sequences kept in the stats: enough to find them, bounded for a log full of garbage. */
export const MAX_BAD_SEQS = 100;

export async function assertLogExists(bus: Bus): Promise<StreamInfo> {
  try {
    return await bus.jsm.streams.info(bus.subjects.logStream);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_LOG_UNAVAILABLE",
      `no log stream ${bus.subjects.logStream}: no coordinator has run in namespace "${bus.subjects.namespace}" on this server (${String((error as Error)?.message ?? error)})`,
      { stream: bus.subjects.logStream },
      error,
    );
  }
}

/**
 * A bounded read fetches this many records at a time, the next batch on its way while one is
 * handed on: never more than two batches in memory (consume() queued whatever the server sent,
 * up to the whole log for a reader slower than the server, such as a replay). Small batches keep
 * the server sending steadily: 1000-record batches left the reader waiting for the next one on
 * a loaded machine (bench/replay.ts: 128 was as fast as consume(), 256 and 1000 slower).
 */
export const READ_BATCH = 128;
export const MAX_READ_BATCH = 10_000;
/**
 * How long one batch may take to arrive in full. Past it the batch ends with what came; a batch
 * with nothing at all while the server still counts records left is HOOKBUS_LOG_READ_TIMEOUT.
 */
export const READ_BATCH_DEADLINE_MS = 30_000;

export function readLog(bus: Bus, options: ReadLogOptions = {}): AsyncGenerator<LogEntry> {
  return entriesOf(readLogBatches(bus, options));
}

/**
 * The records of a read as they were fetched, one batch per fetch (a tail: one per record), each
 * record decoded and checked as it is taken, exactly as `readLog` yields them. Replay reads the
 * log this way: one async step per fetch, not per record, for every layer between the two.
 * @internal
 */
export async function* readLogBatches(
  bus: Bus,
  options: ReadLogOptions = {},
): AsyncGenerator<EntryBatch> {
  const stream = await assertLogExists(bus);
  // Bounded: a read (not a tail) never goes past what the stream held when it started, even
  // while records keep arriving.
  const lastSeq = stream.state.last_seq;
  const subject = bus.subjects.auditFilter(options.filter);
  const stats = options.stats;
  if (stats !== undefined) stats.filterSubject = subject;
  const consumer = await bus.js.consumers.get(bus.subjects.logStream, {
    filter_subjects: subject,
    ...(options.fromSeq !== undefined
      ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: options.fromSeq }
      : options.since !== undefined
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: options.since.toISOString() }
        : { deliver_policy: DeliverPolicy.All }),
  });
  try {
    // The ordered consumer was created with the filter: its creation info counts what matches.
    const info = await consumer.info(true);
    if (stats !== undefined) stats.pending = info.num_pending;
    if (options.follow === true) {
      for await (const entry of tail(bus, consumer, options)) yield new OneEntry(entry);
      return;
    }
    yield* readBatches(bus, consumer, info.num_pending, lastSeq, options);
  } finally {
    // Leave nothing behind on the server (an idle ordered consumer would linger for minutes).
    await deleteOrderedConsumer(consumer, bus.logger);
  }
}

/** What `take` returns once a batch has nothing more to hand on. */
export const END_OF_BATCH = Symbol("end of batch");

/**
 * One fetch's records, handed on one at a time. `take` decodes and checks the next record when
 * it is asked for (so a reader that stops early never pays for, or counts, the rest): the entry,
 * or END_OF_BATCH; a promise only for a record that must be inflated or fetched first.
 * @internal
 */
export interface EntryBatch {
  take(): MaybePromise<LogEntry | typeof END_OF_BATCH>;
  /** The read ends with this batch (end of the log as it was, a record past `until`, an abort). */
  readonly last: boolean;
}

class OneEntry implements EntryBatch {
  readonly last = false;
  constructor(private entry: LogEntry | undefined) {}
  take(): LogEntry | typeof END_OF_BATCH {
    const { entry } = this;
    this.entry = undefined;
    return entry ?? END_OF_BATCH;
  }
}

class FetchedBatch implements EntryBatch {
  last = false;
  private index = 0;

  constructor(
    private readonly bus: Bus,
    private readonly msgs: readonly JsMsg[],
    private readonly lastSeq: number,
    private readonly options: ReadLogOptions,
  ) {}

  take(): MaybePromise<LogEntry | typeof END_OF_BATCH> {
    const { options } = this;
    while (!this.last && this.index < this.msgs.length) {
      const msg = this.msgs[this.index++]!;
      if (options.signal?.aborted === true) break;
      if (options.stats !== undefined) options.stats.delivered++;
      if (msg.seq > this.lastSeq) break;
      // The last record of the log as it was: hand it on, then end.
      if (msg.seq >= this.lastSeq) this.last = true;
      // Plain JSON records (nearly all) decode without a promise; gzip and blob ones await.
      const read = readEntryNow(this.bus, msg, options);
      if (isPromise(read))
        return read.then((entry) => (entry === undefined ? this.take() : this.checked(entry)));
      if (read !== undefined) return this.checked(read);
    }
    if (this.index < this.msgs.length) this.last = true; // stopped early: an abort or the end
    return END_OF_BATCH;
  }

  private checked(entry: LogEntry): LogEntry | typeof END_OF_BATCH {
    if (this.options.until !== undefined && entry.storedAt > this.options.until) {
      this.last = true;
      return END_OF_BATCH;
    }
    return entry;
  }
}

/**
 * The entries of fetched batches one by one: one async step per record for the reader.
 * @internal
 */
export async function* entriesOf(batches: AsyncIterable<EntryBatch>): AsyncGenerator<LogEntry> {
  let taken = 0;
  for await (const batch of batches) {
    for (;;) {
      // A reader that answers every record at once (replay) runs on promise jobs alone and
      // would starve the socket: the next batch's pull request would leave, and its records
      // arrive, only after this batch. A turn of the event loop now and then lets both happen.
      if (++taken % YIELD_EVERY === 0) await turnOfEventLoop();
      const next = batch.take();
      const entry = isPromise(next) ? await next : next;
      if (entry === END_OF_BATCH) break;
      yield entry;
    }
  }
}

/** Until the signal aborts: one consume() that keeps pulling as records arrive. */
async function* tail(
  bus: Bus,
  consumer: Consumer,
  options: ReadLogOptions,
): AsyncGenerator<LogEntry> {
  const messages = await consumer.consume({ max_messages: 256 });
  const stop = () => messages.stop();
  const aborted = () => options.signal?.aborted === true;
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    if (aborted()) return;
    for await (const msg of messages) {
      // Messages already pulled are still in the iterator after stop(): an abort ends it here.
      if (aborted()) return;
      if (options.stats !== undefined) options.stats.delivered++;
      const entry = await readEntry(bus, msg, options);
      if (entry === undefined) continue;
      if (options.until !== undefined && entry.storedAt > options.until) return;
      yield entry;
    }
  } finally {
    options.signal?.removeEventListener("abort", stop);
    messages.stop();
  }
}

/**
 * What matched when the read started, in fetches of `options.batch` records. While one batch is
 * handed on, the next one is already on its way (at most two batches in memory), so a slow reader
 * never waits for the server and a fast server never floods a slow reader. Each fetch asks for no
 * more than the server counts as left, so it never waits for records that will not come.
 */
async function* readBatches(
  bus: Bus,
  consumer: Consumer,
  pendingAtStart: number,
  lastSeq: number,
  options: ReadLogOptions,
): AsyncGenerator<EntryBatch> {
  const batch = readBatchSize(options.batch);
  const deadlineMs = options.batchDeadlineMs ?? READ_BATCH_DEADLINE_MS;
  let inFlight: Batch | undefined =
    pendingAtStart > 0
      ? fetchBatch(consumer, Math.min(batch, pendingAtStart), deadlineMs)
      : undefined;
  try {
    while (inFlight !== undefined && options.signal?.aborted !== true) {
      const msgs = await inFlight.received;
      inFlight = undefined;
      if (msgs.length === 0) {
        await nothingArrived(bus, consumer, deadlineMs);
        return;
      }
      const last = msgs[msgs.length - 1]!;
      const left = last.info.pending;
      if (left > 0 && last.seq < lastSeq)
        inFlight = fetchBatch(consumer, Math.min(batch, left), deadlineMs);
      const fetched = new FetchedBatch(bus, msgs, lastSeq, options);
      yield fetched;
      if (fetched.last) return;
    }
  } finally {
    inFlight?.stop();
    // An ordered consumer takes one fetch at a time: let a stopped one finish before the delete.
    await inFlight?.received.catch(() => {});
  }
}

const YIELD_EVERY = 32;
const turnOfEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Batch {
  /** Every message of the fetch, once it has ended (complete, expired, or stopped). */
  received: Promise<JsMsg[]>;
  stop(): void;
}

/** One fetch, drained into an array as its messages arrive; stopped at the deadline at the latest. */
function fetchBatch(consumer: Consumer, size: number, deadlineMs: number): Batch {
  let stopped = false;
  let messages: { stop(): void } | undefined;
  const stop = () => {
    stopped = true;
    messages?.stop();
  };
  const received = (async () => {
    const fetched = await consumer.fetch({
      max_messages: size,
      // The server ends the pull then; the timer below covers a server that never answers.
      expires: Math.max(1000, deadlineMs),
    });
    messages = fetched;
    if (stopped) fetched.stop();
    const timer = setTimeout(stop, deadlineMs + 1000);
    const msgs: JsMsg[] = [];
    try {
      for await (const msg of fetched) msgs.push(msg);
    } finally {
      clearTimeout(timer);
    }
    return msgs;
  })();
  // A prefetched batch may fail while the previous one is still being read: it is awaited (and
  // its error thrown) in turn, not reported as unhandled in between.
  received.catch(() => {});
  return { received, stop };
}

function readBatchSize(batch: number | undefined): number {
  if (batch === undefined) return READ_BATCH;
  if (!Number.isInteger(batch) || batch < 1 || batch > MAX_READ_BATCH) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `a read batch is a whole number of records from 1 to ${MAX_READ_BATCH}, not ${batch}`,
      { argument: "batch" },
    );
  }
  return batch;
}

/**
 * A whole batch deadline passed with no record. Records removed meanwhile (purged, aged out) end
 * the read; records the server still counts but does not deliver are an error, never a read
 * that silently ends early (a replay gate would pass on records it never saw).
 */
async function nothingArrived(bus: Bus, consumer: Consumer, deadlineMs: number): Promise<void> {
  let info;
  let infoError: unknown;
  try {
    info = await consumer.info(false);
  } catch (error) {
    infoError = error; // the count is unknown: reported as the cause of the timeout below
  }
  if (info !== undefined && info.num_pending === 0) return;
  throw new HookbusError(
    "HOOKBUS_LOG_READ_TIMEOUT",
    `no log record arrived within ${deadlineMs} ms while ${info === undefined ? "an unknown number of" : info.num_pending} record(s) were left to read from ${bus.subjects.logStream}`,
    {
      stream: bus.subjects.logStream,
      ...(info === undefined ? {} : { pending: info.num_pending }),
    },
    infoError,
  );
}

/** The entry, or undefined for a bad record (reported, counted and skipped). */
async function readEntry(
  bus: Bus,
  msg: JsMsg,
  options: ReadLogOptions,
): Promise<LogEntry | undefined> {
  return readEntryNow(bus, msg, options);
}

/** As readEntry, without a promise for a plain JSON record: a promise only to inflate or fetch. */
function readEntryNow(
  bus: Bus,
  msg: JsMsg,
  options: ReadLogOptions,
): MaybePromise<LogEntry | undefined> {
  const skip = (error: unknown): undefined => {
    reportBadRecord(bus, options, msg.seq, error);
    return undefined;
  };
  try {
    const decoded = bus.codec.decodeMessageNow(msg, { record: true });
    if (isPromise(decoded)) return decoded.then((value) => toEntry(bus, msg, value)).catch(skip);
    return toEntry(bus, msg, decoded);
  } catch (error) {
    return skip(error);
  }
}

function reportBadRecord(bus: Bus, options: ReadLogOptions, seq: number, cause: unknown): void {
  const error =
    cause instanceof HookbusError && cause.code === "HOOKBUS_BAD_RECORD"
      ? cause
      : new HookbusError(
          "HOOKBUS_BAD_RECORD",
          `log record ${seq} cannot be read: ${String((cause as Error)?.message ?? cause)}`,
          { seq },
          cause,
        );
  const stats = options.stats;
  if (stats !== undefined) {
    stats.badRecordCount = (stats.badRecordCount ?? 0) + 1;
    stats.badRecords ??= [];
    if (stats.badRecords.length < MAX_BAD_SEQS) stats.badRecords.push(seq);
  }
  if (options.onBadRecord !== undefined) options.onBadRecord(error);
  else bus.logger.warn({ seq, code: error.code, err: error.message }, "skipped a bad log record");
}

/** A decoded record (a call and its verdicts: read with the codec's record allowance), checked. */
function toEntry(bus: Bus, msg: JsMsg, decoded: unknown): LogEntry {
  // Compiled from the record schema (zod only on the rejecting path, for its messages).
  const parsed = logRecordValidator().safeParse(decoded);
  if (!parsed.success) {
    throw new HookbusError(
      "HOOKBUS_BAD_RECORD",
      `log record ${msg.seq} does not match the record schema: ${parsed.error.message}`,
      {
        seq: msg.seq,
      },
    );
  }
  return {
    seq: msg.seq,
    subject: msg.subject,
    address: parseAddress(bus, msg),
    storedAt: new Date(Math.floor(msg.info.timestampNanos / 1e6)),
    record: parsed.data,
  };
}

function parseAddress(bus: Bus, msg: JsMsg): LogEntry["address"] {
  try {
    return bus.subjects.parseAudit(msg.subject);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_BAD_RECORD",
      `log record ${msg.seq} is stored on a subject that is not an audit subject`,
      { seq: msg.seq },
      error,
    );
  }
}
