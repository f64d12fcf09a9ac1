/**
 * Querying the log: `queryLog` reads what the log holds now and ends (at once when nothing
 * matches); `tailLog` follows new records until aborted. Both push what they can to the server
 * (one subject filter, a start time) and check the rest on the records they receive.
 */
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import {
  assertLogExists,
  readLog,
  type LogEntry,
  type ReadLogOptions,
  type ReadLogStats,
} from "../log/reader.js";
import { checkAuditFilter, matchesClientSide, subjectFilter, type AuditFilter } from "./filter.js";

/** One record of the log with where it is stored: seq, subject (decoded as `address`), time. */
export type AuditEntry = LogEntry;

export interface AuditStats {
  /** The subject filter the server applied. */
  filterSubject: string;
  /** Records the server had for that filter (and start time) when reading began. */
  pending: number | undefined;
  /** Records the server delivered to this reader (what it read, before client-side checks). */
  delivered: number;
  /** Records yielded (that passed every filter). */
  matched: number;
  /** Records skipped because they could not be read (HOOKBUS_BAD_RECORD): their sequences, bounded. */
  badRecords?: number[];
  badRecordCount?: number;
}

/** An async iterable of entries (iterate it once), with counters filled in while it runs. */
export type AuditQuery = AsyncGenerator<AuditEntry, void, undefined> & {
  readonly stats: AuditStats;
};

export interface QueryOptions {
  /** Stops the read; the iteration then ends without an error. */
  signal?: AbortSignal | undefined;
}

export interface TailOptions extends QueryOptions {
  /**
   * Start at this stream sequence instead of "records stored from now on" (resume a tail at the
   * sequence after the last one seen). `filter.since`, when given, also starts in the past.
   */
  fromSeq?: number | undefined;
}

function run(
  bus: Bus,
  raw: AuditFilter | undefined,
  read: (filter: AuditFilter) => ReadLogOptions,
): AuditQuery {
  // Checked before anything is read: a bad filter throws here, not on the first iteration.
  const filter = checkAuditFilter(raw);
  const stats: AuditStats = {
    filterSubject: bus.subjects.auditFilter(subjectFilter(filter)),
    pending: undefined,
    delivered: 0,
    matched: 0,
  };
  async function* entries(): AsyncGenerator<AuditEntry, void, undefined> {
    const readStats: ReadLogStats = { delivered: 0 };
    const options = read(filter);
    try {
      for await (const entry of readLog(bus, { ...options, stats: readStats })) {
        stats.pending = readStats.pending;
        stats.delivered = readStats.delivered;
        if (!matchesClientSide(entry, filter)) continue;
        stats.matched++;
        yield entry;
        if (filter.limit !== undefined && stats.matched >= filter.limit) return;
      }
    } finally {
      stats.pending = readStats.pending;
      stats.delivered = readStats.delivered;
      if (readStats.badRecordCount !== undefined) {
        stats.badRecords = readStats.badRecords ?? [];
        stats.badRecordCount = readStats.badRecordCount;
      }
    }
  }
  return Object.assign(entries(), { stats });
}

/**
 * Every record matching `filter`, in log order, up to what the log held when the query started.
 * Bounded: it ends when it has caught up (at once when nothing matches), at `until`, or at
 * `limit`. Agent, session, hook, outcome and since are filtered by the server; policy, until,
 * shadowChanged and limit by this reader. Throws HOOKBUS_INVALID_ARGUMENT for a bad filter and
 * (on first iteration) HOOKBUS_LOG_UNAVAILABLE when the namespace has no log.
 */
export function queryLog(
  bus: Bus,
  filter: AuditFilter = {},
  options: QueryOptions = {},
): AuditQuery {
  return run(bus, filter, (f) => ({
    filter: subjectFilter(f),
    ...(f.since === undefined ? {} : { since: f.since }),
    ...(f.until === undefined ? {} : { until: f.until }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }));
}

/**
 * Follows the log: resolves once the starting point is fixed (so every record stored after the
 * returned promise resolves is delivered), to an iterable of the records matching `filter` as they
 * are stored — from now on, or from `filter.since` / `options.fromSeq` — until `options.signal`
 * aborts (the iteration then ends normally), `until` is passed or `limit` records were yielded.
 * Rejects with HOOKBUS_INVALID_ARGUMENT for a bad filter and HOOKBUS_LOG_UNAVAILABLE when the
 * namespace has no log.
 */
export async function tailLog(
  bus: Bus,
  filter: AuditFilter = {},
  options: TailOptions = {},
): Promise<AuditQuery> {
  checkAuditFilter(filter);
  const info = await assertLogExists(bus);
  let start: Pick<ReadLogOptions, "since" | "fromSeq">;
  if (options.fromSeq !== undefined) {
    if (!Number.isSafeInteger(options.fromSeq) || options.fromSeq < 1)
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        `fromSeq must be a positive integer, got ${String(options.fromSeq)}`,
        { argument: "fromSeq" },
      );
    start = { fromSeq: options.fromSeq };
  } else if (filter.since !== undefined) {
    start = { since: filter.since };
  } else {
    // "From now on": the sequence after the last stored one, so nothing stored later is lost.
    start = { fromSeq: info.state.last_seq + 1 };
  }
  return run(bus, filter, (f) => ({
    filter: subjectFilter(f),
    ...start,
    ...(f.until === undefined ? {} : { until: f.until }),
    follow: true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  }));
}
