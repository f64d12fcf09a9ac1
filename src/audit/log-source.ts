/**
 * The audit log read by scanning the log itself (JetStream): no index needed, and what a scan
 * cannot answer without reading everything (pages with a cursor, counts, approvals pages) is
 * refused with HOOKBUS_INVALID_ARGUMENT naming the index. Filters only the index answers
 * (`status`, `blockedBy`, `cursor`, `newestFirst`) are refused the same way, never ignored.
 * Every read that walks old records is guarded by `maxScan` first (scan-limit.ts says why).
 */
import type { Bus } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import type { AuditReadOptions, AuditSource, AuditTailOptions } from "./audit-source.js";
import type { IndexFilter } from "./pg/query.js";
import type { LogEntry } from "../log/reader.js";
import { readSelection, type LogSelection } from "../log/selection.js";
import { fetchEntry } from "./pg/selection.js";
import { queryLog, tailLog, type AuditEntry, type AuditQuery } from "./query.js";
import { assertScanAllowed, DEFAULT_MAX_SCAN } from "./scan-limit.js";
import { sessionTimeline, type TimelineOptions } from "./timeline.js";

const INDEX_ONLY_FILTERS = ["status", "blockedBy", "cursor", "newestFirst"] as const;

function needsIndex(what: string, argument: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${what} needs the index: pass --index postgres://… or set HOOKBUS_INDEX_URL`,
    { argument },
  );
}

function scanFilter(filter: IndexFilter): IndexFilter {
  const used = INDEX_ONLY_FILTERS.find((f) => filter[f] !== undefined && filter[f] !== false);
  if (used !== undefined) throw needsIndex(`the filter ${used}`, used);
  return filter;
}

export class LogAuditSource implements AuditSource {
  readonly kind = "log" as const;

  constructor(
    /** The caller's bus (not closed by `close`). */
    readonly bus: Bus,
    /** The largest log a read may walk (HOOKBUS_SCAN_TOO_LARGE above it); 0: no limit. */
    readonly maxScan: number = DEFAULT_MAX_SCAN,
    /** Lets go of a connection opened for this source (openAuditSource's `connectLog`). */
    private readonly release?: () => Promise<void>,
  ) {}

  get namespace(): string {
    return this.bus.subjects.namespace;
  }

  /** The scan with its counters (records read, skipped): what a caller reports after it. */
  async scan(filter: IndexFilter, options: AuditReadOptions = {}): Promise<AuditQuery> {
    const f = scanFilter(filter);
    await assertScanAllowed(this.bus, this.maxScan);
    return queryLog(this.bus, options.max === undefined ? f : { ...f, limit: options.max }, {
      signal: options.signal,
    });
  }

  async *query(filter: IndexFilter, options?: AuditReadOptions): AsyncGenerator<AuditEntry> {
    yield* await this.scan(filter, options);
  }

  async timeline(sessionKey: string, options?: TimelineOptions) {
    await assertScanAllowed(this.bus, this.maxScan);
    return sessionTimeline(this.bus, sessionKey, options);
  }

  /** From now on reads nothing old; a start in the past (`since`) walks the log, so is guarded. */
  async tail(filter: IndexFilter, options: AuditTailOptions): Promise<AuditQuery> {
    const f = scanFilter(filter);
    if (f.since !== undefined) await assertScanAllowed(this.bus, this.maxScan);
    return tailLog(this.bus, f, { signal: options.signal });
  }

  async record(seq: number): Promise<AuditEntry | undefined> {
    try {
      return await fetchEntry(this.bus, seq);
    } catch (error) {
      if (error instanceof HookbusError && error.code === "HOOKBUS_LOG_UNAVAILABLE")
        return undefined;
      throw error;
    }
  }

  selection(selection: LogSelection): AsyncIterable<LogEntry> {
    return readSelection(this.bus, selection);
  }

  page(): never {
    throw needsIndex("a page with a cursor", "index");
  }

  stats(): never {
    throw needsIndex("counts over a range", "index");
  }

  countsPerMinute(): never {
    throw needsIndex("counts per minute", "index");
  }

  records(): never {
    throw needsIndex("records by sequence", "index");
  }

  callRecords(): never {
    throw needsIndex("a call's records", "index");
  }

  pendingApprovals(): never {
    throw needsIndex("approvals pages", "index");
  }

  approvalSettlements(): never {
    throw needsIndex("approvals pages", "index");
  }

  async close(): Promise<void> {
    await this.release?.();
  }
}
