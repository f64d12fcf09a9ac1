/**
 * Counts over a time range from the per-minute rollups (migrations/002): the whole minutes inside
 * [since, until] are read from the rollup tables, the partial minutes at either edge from the
 * rows themselves (at most two minutes of rows, through the time index), so every count is
 * exact for any range, not only for whole minutes. With an agent (the rollups are not per agent)
 * the whole range is read from the rows.
 *
 * Latency percentiles come from the rollups' histogram buckets (10 % wide): p50/p99 are the
 * geometric middle of the bucket that holds the percentile, within 5 % of the exact value.
 */
import type { PgPool } from "./pool.js";

const MINUTE_MS = 60_000;

export interface StatsRange {
  since?: Date | undefined;
  until?: Date | undefined;
  agentId?: string | undefined;
  /** One run (the context's `runId`): like an agent, counted from the rows. */
  runId?: string | undefined;
}

/**
 * The SQL that selects one range: `minutes` for the rollup tables (alias-free columns `ns`,
 * `minute`) or undefined when no whole minute is read from them; `rows` for hookbus_records `r`,
 * one condition per stretch read from the rows (none: nothing is).
 */
interface RangeSql {
  params: unknown[];
  minutes: string | undefined;
  rows: string[];
}

/** Splits [since, until] (both inclusive, either open) into whole minutes and row stretches. */
function rangeSql(namespace: string, range: StatsRange): RangeSql {
  const params: unknown[] = [namespace];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const rowBase = "r.ns = $1 AND r.kind <> 'invalid'";
  const { since, until, agentId, runId } = range;
  if (agentId !== undefined || runId !== undefined) {
    // The rollups are per namespace and minute only: one agent's or run's counts come from rows.
    const parts = [rowBase];
    if (agentId !== undefined) parts.push(`r.agent_id = ${p(agentId)}`);
    if (runId !== undefined) parts.push(`r.run_id = ${p(runId)}`);
    if (since !== undefined) parts.push(`r.stored_at >= ${p(since)}`);
    if (until !== undefined) parts.push(`r.stored_at <= ${p(until)}`);
    return { params, minutes: undefined, rows: [parts.join(" AND ")] };
  }
  // Whole minutes: from the first minute starting at or after `since` to the last one ending at
  // or before `until` (a minute [m, m + 1 min) is whole when m + 1 min <= until).
  const first =
    since === undefined ? undefined : Math.ceil(since.getTime() / MINUTE_MS) * MINUTE_MS;
  const end = until === undefined ? undefined : Math.floor(until.getTime() / MINUTE_MS) * MINUTE_MS;
  if (first !== undefined && end !== undefined && first >= end) {
    // Less than one whole minute in range: all of it from the rows.
    const stretch = [rowBase];
    if (since !== undefined) stretch.push(`r.stored_at >= ${p(since)}`);
    if (until !== undefined) stretch.push(`r.stored_at <= ${p(until)}`);
    return { params, minutes: undefined, rows: [stretch.join(" AND ")] };
  }
  const minutes = ["ns = $1"];
  const rows: string[] = [];
  if (since !== undefined && first !== undefined) {
    const from = new Date(first);
    minutes.push(`minute >= ${p(from)}`);
    if (first > since.getTime())
      rows.push(`${rowBase} AND r.stored_at >= ${p(since)} AND r.stored_at < ${p(from)}`);
  }
  if (until !== undefined && end !== undefined) {
    const to = new Date(end);
    minutes.push(`minute < ${p(to)}`);
    rows.push(`${rowBase} AND r.stored_at >= ${p(to)} AND r.stored_at <= ${p(until)}`);
  }
  return { params, minutes: minutes.join(" AND "), rows };
}

/**
 * One SELECT per source of the range, as a UNION ALL: `fromRollup` reads the whole minutes
 * (given their condition), `fromRows` one stretch of rows (given its condition on `r`).
 */
function rangeUnion(
  namespace: string,
  range: StatsRange,
  fromRollup: (where: string) => string,
  fromRows: (where: string) => string,
): { union: string; params: unknown[] } {
  const { params, minutes, rows } = rangeSql(namespace, range);
  const parts = [...(minutes === undefined ? [] : [fromRollup(minutes)]), ...rows.map(fromRows)];
  return { union: parts.join(" UNION ALL "), params };
}

export interface RolledCount {
  /** The minute's start (only when counted per minute). */
  minute?: Date;
  hook: string;
  outcome: string;
  count: number;
}

/**
 * Records over the range by hook and outcome, summed over the range (`perMinute` false) or per
 * minute. Both sides of the union group the same way, so the sum is exact.
 */
export async function rolledRecordCounts(
  pool: PgPool,
  namespace: string,
  range: StatsRange,
  perMinute: boolean,
): Promise<RolledCount[]> {
  const { union, params } = rangeUnion(
    namespace,
    range,
    (w) => `SELECT minute, hook, outcome, records AS n FROM hookbus_minute_records WHERE ${w}`,
    (w) =>
      `SELECT hookbus_minute(r.stored_at) AS minute, r.hook, r.outcome, 1 AS n FROM hookbus_records r WHERE ${w}`,
  );
  const keys = perMinute ? "minute, hook, outcome" : "hook, outcome";
  const r = await pool.query<{ minute?: Date; hook: string; outcome: string; n: string }>(
    `SELECT ${keys}, sum(n) AS n FROM (${union}) x GROUP BY ${keys} ORDER BY ${keys}`,
    params,
  );
  return r.rows.map((x) => ({
    ...(x.minute === undefined ? {} : { minute: x.minute }),
    hook: x.hook,
    outcome: x.outcome,
    count: Number(x.n),
  }));
}

export interface PolicyCountRow {
  policy: string;
  status: string;
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/** The geometric middle of latency bucket `b` (migrations/002: hookbus_latency_bucket). */
export function bucketMiddleMs(bucket: number): number {
  if (bucket <= 0) return 0;
  return 0.001 * 1.1 ** (bucket - 0.5);
}

/** The `p` quantile (0-1) of a histogram in bucket order: the middle of the bucket holding it. */
function quantile(buckets: readonly { bucket: number; n: number }[], p: number): number | null {
  const known = buckets.filter((b) => b.bucket >= 0);
  const total = known.reduce((s, b) => s + b.n, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const b of known) {
    seen += b.n;
    if (seen >= rank) return bucketMiddleMs(b.bucket);
  }
  return bucketMiddleMs(known.at(-1)!.bucket);
}

/** Policy rows over the range by policy and status, with latency p50/p99 from the buckets. */
export async function rolledPolicyCounts(
  pool: PgPool,
  namespace: string,
  range: StatsRange,
): Promise<PolicyCountRow[]> {
  const { union, params } = rangeUnion(
    namespace,
    range,
    (w) => `SELECT policy, status, bucket, outcomes AS n FROM hookbus_minute_policies WHERE ${w}`,
    // A policy's `ok` is an element of its record's arrays, every other status a row
    // (migrations/005).
    (w) =>
      `SELECT p.policy, p.status, hookbus_latency_bucket(p.latency_ms) AS bucket, 1 AS n
       FROM hookbus_records r JOIN hookbus_policy_outcomes p ON p.ns = r.ns AND p.seq = r.seq
       WHERE ${w}
       UNION ALL
       SELECT o.policy, 'ok', hookbus_latency_bucket(o.latency_ms), 1
       FROM hookbus_records r, unnest(r.ok_policies, r.ok_latencies) AS o(policy, latency_ms)
       WHERE ${w}`,
  );
  const r = await pool.query<{ policy: string; status: string; bucket: number; n: string }>(
    `SELECT policy, status, bucket, sum(n) AS n FROM (${union}) x
     GROUP BY policy, status, bucket ORDER BY policy, status, bucket`,
    params,
  );
  const groups = new Map<
    string,
    { policy: string; status: string; buckets: { bucket: number; n: number }[] }
  >();
  for (const row of r.rows) {
    const key = JSON.stringify([row.policy, row.status]);
    const group = groups.get(key) ?? { policy: row.policy, status: row.status, buckets: [] };
    group.buckets.push({ bucket: row.bucket, n: Number(row.n) });
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => ({
    policy: g.policy,
    status: g.status,
    count: g.buckets.reduce((s, b) => s + b.n, 0),
    p50Ms: quantile(g.buckets, 0.5),
    p99Ms: quantile(g.buckets, 0.99),
  }));
}
