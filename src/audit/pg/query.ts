/**
 * Audit questions answered by the index (PostgreSQL) instead of a log scan: filtered queries in
 * log order with a limit and a cursor, session timelines, counts over a time range. Entries have
 * the shape of the log reader's (`seq`, `subject`, `address`, `storedAt`, `record`), so the audit
 * formatting and timeline code serve both paths. Time bounds become sequence bounds first (one
 * index probe each), so every query is a range scan of an index that ends in `seq`.
 */
import { showScrubbed } from "../../privacy/record-cipher.js";
import { checkAuditFilter, type AuditFilter } from "../filter.js";
import type { AuditEntry } from "../query.js";
import type { RecordKind } from "../../bus/subjects.js";
import { POLICY_NAME_PATTERN } from "../../bus/tokens.js";
import { HookbusError } from "../../foundation/errors.js";
import type { LogRecord } from "../../log/record.js";
import { indexError, type PgPool } from "./pool.js";
import { rolledPolicyCounts, rolledRecordCounts, type PolicyCountRow } from "./rollup.js";

export const POLICY_STATUSES = [
  "ok",
  "error",
  "timeout",
  "invalid",
  "unavailable",
  "late",
] as const;
export type PolicyStatusFilter = (typeof POLICY_STATUSES)[number];

/** The most rows one query returns; larger reads page with the cursor. */
export const MAX_INDEX_LIMIT = 10_000;
export const DEFAULT_INDEX_LIMIT = 1000;

export interface IndexFilter extends AuditFilter {
  /** Decisions where a policy (with `policy`: that policy) ended with this status; `late` for late verdicts. */
  status?: PolicyStatusFilter | undefined;
  /** Decisions blocked by this policy (the first blocker). */
  blockedBy?: string | undefined;
  /**
   * Only records after this stream sequence (the `nextCursor` of the previous page); with
   * `newestFirst`, only records before it.
   */
  cursor?: number | undefined;
  /** Newest record first (what an operator asks first: "what was just blocked?"); default log order. */
  newestFirst?: boolean | undefined;
}

export interface IndexPage {
  entries: AuditEntry[];
  /** Pass as `cursor` for the next page; undefined when this page was the last. */
  nextCursor: number | undefined;
}

function invalid(argument: string, message: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_ARGUMENT", message, { argument });
}

export function checkIndexFilter(filter: IndexFilter = {}): IndexFilter {
  const checked: IndexFilter = checkAuditFilter(filter);
  if (filter.status !== undefined) {
    if (!(POLICY_STATUSES as readonly string[]).includes(filter.status))
      throw invalid(
        "status",
        `unknown status ${JSON.stringify(filter.status)}: expected one of ${POLICY_STATUSES.join(", ")}`,
      );
    checked.status = filter.status;
  }
  if (filter.blockedBy !== undefined) {
    if (typeof filter.blockedBy !== "string" || !POLICY_NAME_PATTERN.test(filter.blockedBy))
      throw invalid(
        "blockedBy",
        `invalid policy name ${JSON.stringify(filter.blockedBy)}: policy names are 1-64 of A-Z a-z 0-9 _ -`,
      );
    checked.blockedBy = filter.blockedBy;
  }
  if (filter.cursor !== undefined) {
    if (!Number.isSafeInteger(filter.cursor) || filter.cursor < 0)
      throw invalid(
        "cursor",
        `cursor must be a stream sequence (>= 0), got ${String(filter.cursor)}`,
      );
    checked.cursor = filter.cursor;
  }
  if (filter.newestFirst === true) checked.newestFirst = true;
  if (checked.limit !== undefined && checked.limit > MAX_INDEX_LIMIT)
    throw invalid("limit", `limit is at most ${MAX_INDEX_LIMIT}; page with the cursor`);
  return checked;
}

/** Builds `WHERE …` for a checked filter; `$1` is always the namespace. */
class Where {
  readonly params: unknown[];
  readonly parts: string[] = ["r.ns = $1", "r.kind <> 'invalid'"];
  /**
   * Order by `seq + 0`: the rows are found through another index (the GIN on ok_policies) and
   * sorted, not read in log order through the primary key until enough match.
   */
  sortFound = false;
  constructor(namespace: string) {
    this.params = [namespace];
  }
  add(sql: (p: string) => string, value: unknown): void {
    this.parts.push(sql(this.param(value)));
  }
  /** Adds a parameter without a condition of its own; returns its placeholder. */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }
  get sql(): string {
    return this.parts.join(" AND ");
  }
}

/** The first (last) sequence stored at or after `since` (at or before `until`). */
async function seqBounds(
  pool: PgPool,
  namespace: string,
  since: Date | undefined,
  until: Date | undefined,
): Promise<{ from?: number; to?: number }> {
  const bounds: { from?: number; to?: number } = {};
  if (since !== undefined) {
    const r = await pool.query<{ seq: string }>(
      "SELECT seq FROM hookbus_records WHERE ns = $1 AND stored_at >= $2 ORDER BY stored_at, seq LIMIT 1",
      [namespace, since],
    );
    bounds.from = r.rows[0] === undefined ? Number.MAX_SAFE_INTEGER : Number(r.rows[0].seq);
  }
  if (until !== undefined) {
    const r = await pool.query<{ seq: string }>(
      "SELECT seq FROM hookbus_records WHERE ns = $1 AND stored_at <= $2 ORDER BY stored_at DESC, seq DESC LIMIT 1",
      [namespace, until],
    );
    bounds.to = r.rows[0] === undefined ? 0 : Number(r.rows[0].seq);
  }
  return bounds;
}

async function whereOf(pool: PgPool, namespace: string, f: IndexFilter): Promise<Where> {
  const w = new Where(namespace);
  if (f.agentId !== undefined) w.add((p) => `r.agent_id = ${p}`, f.agentId);
  if (f.sessionKey !== undefined) w.add((p) => `r.session_key = ${p}`, f.sessionKey);
  if (f.runId !== undefined) w.add((p) => `r.run_id = ${p}`, f.runId);
  if (f.hook !== undefined) w.add((p) => `r.hook = ${p}`, f.hook);
  if (f.outcome !== undefined) w.add((p) => `r.outcome = ${p}`, f.outcome);
  if (f.blockedBy !== undefined) w.add((p) => `r.blocked_by = ${p}`, f.blockedBy);
  if (f.shadowChanged === true) w.parts.push("r.shadow_changed");
  const { from, to } = await seqBounds(pool, namespace, f.since, f.until);
  if (from !== undefined) w.add((p) => `r.seq >= ${p}`, from);
  if (to !== undefined) w.add((p) => `r.seq <= ${p}`, to);
  if (f.since !== undefined) w.add((p) => `r.stored_at >= ${p}`, f.since);
  if (f.until !== undefined) w.add((p) => `r.stored_at <= ${p}`, f.until);
  if (f.cursor !== undefined)
    w.add((p) => (f.newestFirst === true ? `r.seq < ${p}` : `r.seq > ${p}`), f.cursor);
  if (f.policy !== undefined || f.status !== undefined) w.parts.push(policyCondition(w, f));
  if (f.policy !== undefined && f.status === "ok")
    w.sortFound = !(await okPolicyIsCommon(pool, f.policy));
  return w;
}

/**
 * Whether at least 1 % of the records a policy answered carry `policy`'s `ok`, by ANALYZE's
 * element statistics of ok_policies. Reading the records in log order finds a page of a common
 * one at once; for a rare or unknown one it would read the whole namespace (2 s at 1M records),
 * where the GIN index finds its few records. PostgreSQL's own estimate cannot tell them apart: it
 * gives every name missing from the statistics the same 0.5 %. Before the first ANALYZE every
 * policy counts as rare: found through the GIN index and sorted (the same answer, slower for a
 * common one until autovacuum analyzes the table).
 */
async function okPolicyIsCommon(pool: PgPool, policy: string): Promise<boolean> {
  const r = await pool.query<{ common: boolean }>(
    `SELECT coalesce(most_common_elem_freqs[array_position(most_common_elems::text::text[], $1)] >= 0.01, false) AS common
       FROM pg_stats WHERE schemaname = ANY (current_schemas(false))
        AND tablename = 'hookbus_records' AND attname = 'ok_policies'`,
    [policy],
  );
  return r.rows[0]?.common === true;
}

/**
 * Records where a policy (`policy`: that one) ended with `status`. A policy's `ok` is an element
 * of its record's ok_policies, every other status a row of hookbus_policy_outcomes
 * (migrations/005); without a status, either, or a refusal the SDK or an adapter recorded (an
 * observation names its policy in blocked_by).
 */
function policyCondition(w: Where, { policy, status }: IndexFilter): string {
  const name = policy === undefined ? undefined : w.param(policy);
  const answeredOk =
    name === undefined ? "r.ok_policies IS NOT NULL" : `r.ok_policies @> ARRAY[${name}::text]`;
  if (status === "ok") return answeredOk;
  const conds = ["p.ns = r.ns", "p.seq = r.seq"];
  if (name !== undefined) conds.push(`p.policy = ${name}`);
  if (status !== undefined) conds.push(`p.status = ${w.param(status)}`);
  const rare = `SELECT 1 FROM hookbus_policy_outcomes p WHERE ${conds.join(" AND ")}`;
  if (status !== undefined) return `EXISTS (${rare})`;
  // OFFSET 0 keeps the probe per record (a primary-key lookup, made only when the array did not
  // match): otherwise PostgreSQL hashes all the policy's rare rows first, in every query (22 ms
  // at 1M records, growing with the namespace: docs/performance.md, "Policy rows as columns").
  return `(${answeredOk} OR EXISTS (${rare} OFFSET 0) OR (r.kind = 'observation' AND r.blocked_by = ${name}))`;
}

interface EntryRow {
  seq: string;
  subject: string;
  stored_at: Date;
  agent_id: string;
  session_key: string;
  hook: string;
  outcome: string;
  record: unknown;
}

const ENTRY_COLUMNS =
  "r.seq, r.subject, r.stored_at, r.agent_id, r.session_key, r.hook, r.outcome, r.record";

function toEntry(row: EntryRow): AuditEntry {
  return {
    seq: Number(row.seq),
    subject: row.subject,
    address: {
      agentId: row.agent_id,
      sessionKey: row.session_key,
      hook: row.hook,
      kind: row.outcome as RecordKind,
    },
    storedAt: row.stored_at,
    // Indexed from the log as it was stored; not re-validated (older and newer records alike).
    // An erased subject's rows were scrubbed: their sealed places read "[erased]".
    record: showScrubbed(row.record as LogRecord),
  };
}

/**
 * One page of the records matching `filter`, in log order (newest first with `newestFirst`). Throws HOOKBUS_INVALID_ARGUMENT for
 * a bad filter and HOOKBUS_INDEX_UNAVAILABLE when PostgreSQL fails.
 */
export async function queryIndex(
  pool: PgPool,
  namespace: string,
  filter: IndexFilter = {},
): Promise<IndexPage> {
  const f = checkIndexFilter(filter);
  const limit = f.limit ?? DEFAULT_INDEX_LIMIT;
  try {
    const w = await whereOf(pool, namespace, f);
    w.params.push(limit + 1);
    const r = await pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM hookbus_records r WHERE ${w.sql} ORDER BY r.seq${w.sortFound ? " + 0" : ""}${f.newestFirst === true ? " DESC" : ""} LIMIT $${w.params.length}`,
      w.params,
    );
    const entries = r.rows.slice(0, limit).map(toEntry);
    const more = r.rows.length > limit;
    return { entries, nextCursor: more ? entries.at(-1)?.seq : undefined };
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/** Every page of a query, one entry at a time (for sessions and exports). */
export async function* queryIndexAll(
  pool: PgPool,
  namespace: string,
  filter: IndexFilter = {},
  options: { max?: number; signal?: AbortSignal } = {},
): AsyncGenerator<AuditEntry> {
  let cursor = filter.cursor;
  let yielded = 0;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  for (;;) {
    const limit = Math.min(MAX_INDEX_LIMIT, max - yielded);
    if (limit <= 0) return;
    const page = await queryIndex(pool, namespace, { ...filter, cursor, limit });
    for (const entry of page.entries) {
      if (options.signal?.aborted === true) return;
      yield entry;
      yielded++;
    }
    if (page.nextCursor === undefined) return;
    cursor = page.nextCursor;
  }
}

export interface CountRow {
  hook: string;
  outcome: string;
  count: number;
}

export type { PolicyCountRow };

export interface IndexStats {
  since: Date | undefined;
  until: Date | undefined;
  total: number;
  byHookOutcome: CountRow[];
  byPolicyStatus: PolicyCountRow[];
}

/**
 * Counts per hook and outcome, and per policy and status (with latency p50/p99), over a time
 * range: from the per-minute rollups, exact for any range (rollup.ts).
 */
export async function indexStats(
  pool: PgPool,
  namespace: string,
  range: {
    since?: Date | undefined;
    until?: Date | undefined;
    agentId?: string | undefined;
    runId?: string | undefined;
  } = {},
): Promise<IndexStats> {
  const f = checkIndexFilter(range);
  const checked = { since: f.since, until: f.until, agentId: f.agentId, runId: f.runId };
  try {
    const [records, policies] = await Promise.all([
      rolledRecordCounts(pool, namespace, checked, false),
      rolledPolicyCounts(pool, namespace, checked),
    ]);
    const byHookOutcome = records.map(({ hook, outcome, count }) => ({ hook, outcome, count }));
    return {
      since: f.since,
      until: f.until,
      total: byHookOutcome.reduce((s, x) => s + x.count, 0),
      byHookOutcome,
      byPolicyStatus: policies,
    };
  } catch (error) {
    throw indexError(error, "index stats failed");
  }
}

/** The highest indexed sequence of the namespace (0 when empty): where a tail starts. */
export async function lastIndexedSeq(pool: PgPool, namespace: string): Promise<number> {
  try {
    const r = await pool.query<{ seq: string | null }>(
      "SELECT max(seq) AS seq FROM hookbus_records WHERE ns = $1",
      [namespace],
    );
    return Number(r.rows[0]?.seq ?? 0);
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/**
 * Follows the index: records indexed after `fromSeq` (default: the last one now), polled every
 * `pollMs`, until `signal` aborts.
 */
export async function* tailIndex(
  pool: PgPool,
  namespace: string,
  filter: IndexFilter,
  options: { signal: AbortSignal; fromSeq?: number; pollMs?: number },
): AsyncGenerator<AuditEntry> {
  const f = checkIndexFilter(filter);
  let cursor =
    options.fromSeq !== undefined
      ? options.fromSeq - 1
      : f.since !== undefined
        ? 0
        : await lastIndexedSeq(pool, namespace);
  let yielded = 0;
  while (!options.signal.aborted) {
    const page = await queryIndex(pool, namespace, { ...f, cursor, limit: DEFAULT_INDEX_LIMIT });
    for (const entry of page.entries) {
      if (options.signal.aborted) return;
      yield entry;
      cursor = entry.seq;
      if (f.limit !== undefined && ++yielded >= f.limit) return;
    }
    if (page.nextCursor === undefined) await abortableSleep(options.pollMs ?? 250, options.signal);
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** One indexed record by its stream sequence (undefined when the index has none). */
export async function indexedRecord(
  pool: PgPool,
  namespace: string,
  seq: number,
): Promise<AuditEntry | undefined> {
  try {
    const r = await pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM hookbus_records r WHERE r.ns = $1 AND r.seq = $2 AND r.kind <> 'invalid'`,
      [namespace, seq],
    );
    return r.rows[0] === undefined ? undefined : toEntry(r.rows[0]);
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/** The records at these sequences (at most MAX_INDEX_LIMIT), in one query; missing ones are left out. */
export async function indexedRecords(
  pool: PgPool,
  namespace: string,
  seqs: readonly number[],
): Promise<AuditEntry[]> {
  const wanted = [...new Set(seqs)].filter((s) => Number.isSafeInteger(s) && s > 0);
  if (wanted.length === 0) return [];
  if (wanted.length > MAX_INDEX_LIMIT)
    throw invalid("seqs", `at most ${MAX_INDEX_LIMIT} sequences at once, got ${wanted.length}`);
  try {
    const r = await pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM hookbus_records r WHERE r.ns = $1 AND r.seq = ANY($2::bigint[]) AND r.kind <> 'invalid' ORDER BY r.seq`,
      [namespace, wanted],
    );
    return r.rows.map(toEntry);
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/**
 * The other records of one call in its session (its late verdicts, a decision's error twin),
 * in log order: read through the session index, so the call id needs no index of its own.
 */
export async function callRecords(
  pool: PgPool,
  namespace: string,
  call: { agentId: string; sessionKey: string; callId: string },
  max = 100,
): Promise<AuditEntry[]> {
  try {
    const r = await pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM hookbus_records r
       WHERE r.ns = $1 AND r.session_key = $2 AND r.agent_id = $3 AND r.call_id = $4 AND r.kind <> 'invalid'
       ORDER BY r.seq LIMIT $5`,
      [namespace, call.sessionKey, call.agentId, call.callId, max],
    );
    return r.rows.map(toEntry);
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

export interface MinuteCountRow {
  /** The minute's start. */
  minute: Date;
  outcome: string;
  count: number;
}

/** The most minutes one per-minute count spans (a day). */
export const MAX_MINUTE_BUCKETS = 1440;

/**
 * Records per minute and outcome between `since` and `until` (both required: the range is what
 * bounds the answer to MAX_MINUTE_BUCKETS minutes), optionally of one agent or run.
 */
export async function countsPerMinute(
  pool: PgPool,
  namespace: string,
  range: { since: Date; until: Date; agentId?: string | undefined; runId?: string | undefined },
): Promise<MinuteCountRow[]> {
  const f = checkIndexFilter(range);
  const minutes = (range.until.getTime() - range.since.getTime()) / 60_000;
  if (minutes > MAX_MINUTE_BUCKETS)
    throw invalid(
      "since",
      `per-minute counts span at most ${MAX_MINUTE_BUCKETS} minutes (a day); narrow --since/--until`,
    );
  try {
    const rows = await rolledRecordCounts(
      pool,
      namespace,
      { since: f.since, until: f.until, agentId: f.agentId, runId: f.runId },
      true,
    );
    // The chart stacks outcomes per minute: the hooks are added up here.
    const byMinute = new Map<string, MinuteCountRow>();
    for (const row of rows) {
      const key = `${row.minute!.getTime()} ${row.outcome}`;
      const entry = byMinute.get(key);
      if (entry === undefined)
        byMinute.set(key, { minute: row.minute!, outcome: row.outcome, count: row.count });
      else entry.count += row.count;
    }
    return [...byMinute.values()].sort(
      (a, b) => a.minute.getTime() - b.minute.getTime() || a.outcome.localeCompare(b.outcome),
    );
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/** A page of approval rows, newest first: `before` is the `nextBefore` of the previous page. */
export interface ApprovalIndexPage {
  entries: AuditEntry[];
  /** Pass as `before` for the next (older) page; undefined when this page was the last. */
  nextBefore: number | undefined;
}

export interface ApprovalIndexFilter {
  agentId?: string | undefined;
  /** Only rows with a stream sequence below this one. */
  before?: number | undefined;
  limit: number;
}

async function approvalRows(
  pool: PgPool,
  namespace: string,
  filter: ApprovalIndexFilter,
  condition: string,
): Promise<ApprovalIndexPage> {
  const f = checkIndexFilter({
    agentId: filter.agentId,
    cursor: filter.before,
    limit: filter.limit,
  });
  const limit = f.limit ?? DEFAULT_INDEX_LIMIT;
  const w = new Where(namespace);
  w.parts.push(condition);
  if (f.agentId !== undefined) w.add((p) => `r.agent_id = ${p}`, f.agentId);
  if (f.cursor !== undefined) w.add((p) => `r.seq < ${p}`, f.cursor);
  w.params.push(limit + 1);
  try {
    const r = await pool.query<EntryRow>(
      `SELECT ${ENTRY_COLUMNS} FROM hookbus_records r WHERE ${w.sql} ORDER BY r.seq DESC LIMIT $${w.params.length}`,
      w.params,
    );
    const entries = r.rows.slice(0, limit).map(toEntry);
    return { entries, nextBefore: r.rows.length > limit ? entries.at(-1)?.seq : undefined };
  } catch (error) {
    throw indexError(error, "index query failed");
  }
}

/**
 * Decisions still waiting for a person, newest first: `pending_approval` decisions with no
 * approval record yet (the approval record names its call and its decision's sequence).
 */
export function pendingApprovalDecisions(
  pool: PgPool,
  namespace: string,
  filter: ApprovalIndexFilter,
): Promise<ApprovalIndexPage> {
  return approvalRows(
    pool,
    namespace,
    filter,
    `r.kind = 'decision' AND r.outcome = 'pending_approval' AND NOT EXISTS (
       SELECT 1 FROM hookbus_records a
       WHERE a.ns = r.ns AND a.session_key = r.session_key AND a.agent_id = r.agent_id
         AND a.call_id = r.call_id AND a.kind = 'approval' AND a.decision_seq = r.seq)`,
  );
}

/** Settled requests (their approval records), newest first. */
export function approvalSettlements(
  pool: PgPool,
  namespace: string,
  filter: ApprovalIndexFilter,
): Promise<ApprovalIndexPage> {
  return approvalRows(pool, namespace, filter, "r.kind = 'approval'");
}
