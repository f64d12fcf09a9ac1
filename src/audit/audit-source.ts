/**
 * One owner for reading the audit log: every read (a page, all matches, a session's timeline, a
 * live tail, counts, one record, the approvals a UI lists) goes through an `AuditSource`, and
 * `openAuditSource` (source.ts) is the one place that picks the log scan or the PostgreSQL index.
 * The CLI and the UI only call it. Entries have the log reader's shape whichever answers, so the
 * formatting and timeline code serve both.
 *
 * The log answers what a scan can answer (query, timeline, tail, a record by sequence); what
 * needs the index's tables (pages with a cursor, counts, approvals pages) throws
 * HOOKBUS_INVALID_ARGUMENT naming the index, rather than scanning the whole log behind the
 * caller's back.
 */
import type { StatsRange } from "./pg/rollup.js";
import type {
  ApprovalIndexFilter,
  ApprovalIndexPage,
  IndexFilter,
  IndexPage,
  IndexStats,
  MinuteCountRow,
} from "./pg/query.js";
import type { LogEntry } from "../log/reader.js";
import type { LogSelection } from "../log/selection.js";
import type { AuditEntry } from "./query.js";
import type { TimelineEntry, TimelineOptions } from "./timeline.js";

/** Which reader answers: the log itself (a scan) or the index kept by `hookbus indexer`. */
export type AuditSourceKind = "log" | "index";

export interface AuditReadOptions {
  /** The most entries read (the index stops there; the log scan too). */
  max?: number | undefined;
  /** Stops the read; the iteration then ends without an error. */
  signal?: AbortSignal | undefined;
}

export interface AuditTailOptions {
  signal: AbortSignal;
}

/** The call a record belongs to (its subject tokens and call id). */
export interface AuditCall {
  agentId: string;
  sessionKey: string;
  callId: string;
}

export interface AuditSource {
  readonly kind: AuditSourceKind;
  readonly namespace: string;
  /** One page of matches with a cursor for the next (index only). */
  page(filter: IndexFilter): Promise<IndexPage>;
  /** Every match, in log order. */
  query(filter: IndexFilter, options?: AuditReadOptions): AsyncIterable<AuditEntry>;
  /** A session's records as timeline steps, in log order. */
  timeline(sessionKey: string, options?: TimelineOptions): Promise<TimelineEntry[]>;
  /** Records stored from now on that match, until the signal aborts. */
  tail(filter: IndexFilter, options: AuditTailOptions): Promise<AsyncIterable<AuditEntry>>;
  /** Counts per hook, outcome and policy over a range (index only). */
  stats(range: StatsRange): Promise<IndexStats>;
  /** Records per minute by outcome over a range (index only). */
  countsPerMinute(range: StatsRange & { since: Date; until: Date }): Promise<MinuteCountRow[]>;
  /** One record by stream sequence; undefined when there is none. */
  record(seq: number): Promise<AuditEntry | undefined>;
  /** The records at these sequences, in log order (index only). */
  records(seqs: readonly number[]): Promise<AuditEntry[]>;
  /** Every record of one call (index only). */
  callRecords(call: AuditCall): Promise<AuditEntry[]>;
  /** Decisions that asked for approval and were not settled, newest first (index only). */
  pendingApprovals(filter: ApprovalIndexFilter): Promise<ApprovalIndexPage>;
  /** Settled approval requests, newest first (index only). */
  approvalSettlements(filter: ApprovalIndexFilter): Promise<ApprovalIndexPage>;
  /**
   * Replay's selection (sessions, agent, time range), per session in log order, as the log's own
   * records: the index only chooses the sequences, the log supplies the bytes.
   */
  selection(selection: LogSelection): AsyncIterable<LogEntry>;
  /** Releases what the source holds (the index's pool); the bus of a log source is the caller's. */
  close(): Promise<void>;
}
