/**
 * The audit log read through the index (PostgreSQL): each `AuditSource` question answered by the
 * queries of query.ts on one pool and namespace. The pool is the source's own: `close` ends it.
 */
import type { Bus } from "../../bus/bus.js";
import { HookbusError } from "../../foundation/errors.js";
import type { LogEntry } from "../../log/reader.js";
import type { LogSelection } from "../../log/selection.js";
import type {
  AuditCall,
  AuditReadOptions,
  AuditSource,
  AuditTailOptions,
} from "../audit-source.js";
import type { AuditEntry } from "../query.js";
import { toTimelineEntry, type TimelineEntry, type TimelineOptions } from "../timeline.js";
import type { PgPool } from "./pool.js";
import {
  approvalSettlements,
  callRecords,
  countsPerMinute,
  indexedRecord,
  indexedRecords,
  indexStats,
  pendingApprovalDecisions,
  queryIndex,
  queryIndexAll,
  tailIndex,
  type ApprovalIndexFilter,
  type IndexFilter,
} from "./query.js";
import type { StatsRange } from "./rollup.js";
import { readIndexedSelection } from "./selection.js";

/** The most records a session timeline reads from the index. */
export const MAX_TIMELINE_RECORDS = 100_000;

export class IndexAuditSource implements AuditSource {
  readonly kind = "index" as const;

  constructor(
    /** The index's pool; ended by `close`. */
    readonly pool: PgPool,
    readonly namespace: string,
    /** The log a selection's records are read from (needed by `selection` only). */
    readonly bus?: Bus,
  ) {}

  page(filter: IndexFilter) {
    return queryIndex(this.pool, this.namespace, filter);
  }

  query(filter: IndexFilter, options: AuditReadOptions = {}): AsyncIterable<AuditEntry> {
    return queryIndexAll(this.pool, this.namespace, filter, {
      ...(options.max === undefined ? {} : { max: options.max }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  }

  async timeline(sessionKey: string, options: TimelineOptions = {}): Promise<TimelineEntry[]> {
    const filter = {
      sessionKey,
      ...(options.agentId === undefined ? {} : { agentId: options.agentId }),
      ...(options.runId === undefined ? {} : { runId: options.runId }),
    };
    const steps: TimelineEntry[] = [];
    const read = { max: MAX_TIMELINE_RECORDS, signal: options.signal };
    for await (const entry of this.query(filter, read)) steps.push(toTimelineEntry(entry));
    return steps;
  }

  tail(filter: IndexFilter, options: AuditTailOptions): Promise<AsyncIterable<AuditEntry>> {
    return Promise.resolve(tailIndex(this.pool, this.namespace, filter, options));
  }

  stats(range: StatsRange) {
    return indexStats(this.pool, this.namespace, range);
  }

  countsPerMinute(range: StatsRange & { since: Date; until: Date }) {
    return countsPerMinute(this.pool, this.namespace, range);
  }

  record(seq: number) {
    return indexedRecord(this.pool, this.namespace, seq);
  }

  records(seqs: readonly number[]) {
    return indexedRecords(this.pool, this.namespace, seqs);
  }

  callRecords(call: AuditCall) {
    return callRecords(this.pool, this.namespace, call);
  }

  pendingApprovals(filter: ApprovalIndexFilter) {
    return pendingApprovalDecisions(this.pool, this.namespace, filter);
  }

  approvalSettlements(filter: ApprovalIndexFilter) {
    return approvalSettlements(this.pool, this.namespace, filter);
  }

  selection(selection: LogSelection): AsyncIterable<LogEntry> {
    if (this.bus === undefined)
      throw new HookbusError(
        "HOOKBUS_INVALID_ARGUMENT",
        "a selection read through the index needs the log's connection: open the source with a bus",
        { argument: "bus" },
      );
    return readIndexedSelection(this.bus, this.pool, selection);
  }

  async close(): Promise<void> {
    // The caller's own result or error is what counts; a failing end leaves nothing to do.
    await this.pool.end().catch(() => {});
  }
}
