/**
 * Reading the log: an async iterable of records, filtered by the server where the subject
 * layout allows (agent, session, hook, outcome kind) and by start time, and bounded: it ends
 * when it has caught up with what the stream held when reading started, so an empty result
 * returns at once instead of waiting. With `follow`, it keeps going until aborted.
 */
import { DeliverPolicy, type JsMsg, type StreamInfo } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import type { AuditSubjectFilter, ParsedAuditSubject } from "../bus/subjects.js";
import { HookbusError } from "../errors.js";
import { logRecordValidator } from "../validation/index.js";
import type { LogRecord } from "./record.js";

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

export async function* readLog(bus: Bus, options: ReadLogOptions = {}): AsyncGenerator<LogEntry> {
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
  const follow = options.follow === true;
  try {
    // The ordered consumer was created with the filter: its creation info counts what matches.
    const info = await consumer.info(true);
    if (stats !== undefined) stats.pending = info.num_pending;
    if (!follow && info.num_pending === 0) return;
    const messages = await consumer.consume({ max_messages: 256 });
    const stop = () => messages.stop();
    const aborted = () => options.signal?.aborted === true;
    options.signal?.addEventListener("abort", stop, { once: true });
    try {
      if (aborted()) return;
      for await (const msg of messages) {
        // Messages already pulled are still in the iterator after stop(): an abort ends it here.
        if (aborted()) return;
        if (stats !== undefined) stats.delivered++;
        if (!follow && msg.seq > lastSeq) return;
        const entry = await toEntry(bus, msg).catch((error: unknown) => {
          reportBadRecord(bus, options, msg.seq, error);
          return undefined;
        });
        if (entry === undefined) {
          if (!follow && (msg.info.pending === 0 || msg.seq >= lastSeq)) return;
          continue;
        }
        if (options.until !== undefined && entry.storedAt > options.until) return;
        yield entry;
        if (!follow && (msg.info.pending === 0 || msg.seq >= lastSeq)) return;
      }
    } finally {
      options.signal?.removeEventListener("abort", stop);
      messages.stop();
    }
  } finally {
    // Leave nothing behind on the server (an idle ordered consumer would linger for minutes).
    await consumer.delete().catch(() => {});
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

async function toEntry(bus: Bus, msg: JsMsg): Promise<LogEntry> {
  // Records hold a call and its verdicts: a little deeper and larger than any one message.
  const decoded = await bus.codec.decodeMessage(msg, { record: true });
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
