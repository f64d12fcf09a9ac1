/**
 * Writing a batch of projections: one transaction, two multi-row inserts (records as one JSON
 * array, policy rows as one array per column: a batch of any size is one statement with a fixed
 * number of parameters), and
 * ON CONFLICT DO NOTHING, so a redelivered or replayed record is written once.
 *
 * The per-minute rollups (migrations/002) count only what the inserts RETURN, i.e. the rows
 * they really added: a record another indexer (or an earlier delivery) wrote is neither stored
 * nor counted twice. Every writer adds to the same rollup rows (the current minute's), so the
 * upserts come last, just before the commit, and each writer holds those row locks briefly:
 * policy rows are counted by their insert's own statement, then records (their insert returned
 * them grouped by minute, hook and outcome: a handful of rows). Keys are upserted in key order, policies' before records', so writers that share
 * minutes wait for each other instead of deadlocking.
 */
import { inTransaction, type PgPool } from "./pg.js";
import type { ParsedAuditSubject } from "../bus/subjects.js";
import { invalidProjection, pgSafeJson, type Projection } from "./projection.js";

// Returns the rows it added grouped as the rollup counts them (a handful of rows, not one per
// record); the rollup itself is upserted last (see above).
const INSERT_RECORDS = `
WITH added AS (
INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id, session_key,
  run_id, hook, call_id, blocked_by, registry_revision, received_at, decided_at, latency_ms,
  shadow_changed, index_error, record)
SELECT $1, x.seq, x.subject, x.stored_at, x.kind, x.outcome, x.agent_id, x.session_key, x.run_id,
  x.hook, x.call_id, x.blocked_by, x.registry_revision, x.received_at, x.decided_at, x.latency_ms,
  x.shadow_changed, x.index_error, x.record
FROM json_to_recordset($2::json) AS x(seq bigint, subject text, stored_at timestamptz,
  kind text, outcome text, agent_id text, session_key text, run_id text, hook text, call_id text,
  blocked_by text, registry_revision bigint, received_at timestamptz, decided_at timestamptz,
  latency_ms float8, shadow_changed boolean, index_error text, record jsonb)
ON CONFLICT (ns, seq) DO NOTHING
RETURNING stored_at, hook, outcome, kind
)
SELECT floor(extract(epoch FROM stored_at) / 60)::bigint * 60 AS minute, hook, outcome,
  kind = 'invalid' AS invalid, count(*)::int AS n
FROM added GROUP BY 1, 2, 3, 4`;

/**
 * The batch as ONE JSON array (PostgreSQL parses it once, faster than an array parameter per
 * column); each record's JSON text is spliced in as it is, not parsed and stringified again.
 */
function recordsJson(batch: readonly Projection[]): string {
  const rows = batch.map(({ record: r }) => {
    // The text columns come from the record too (run id, call id, blocked by): made safe for
    // PostgreSQL's JSON-to-text conversion like the record itself.
    const columns = pgSafeJson(
      JSON.stringify({
        seq: r.seq,
        subject: r.subject,
        stored_at: r.storedAt,
        kind: r.kind,
        outcome: r.outcome,
        agent_id: r.agentId,
        session_key: r.sessionKey,
        run_id: r.runId,
        hook: r.hook,
        call_id: r.callId,
        blocked_by: r.blockedBy,
        registry_revision: r.registryRevision,
        received_at: r.receivedAt,
        decided_at: r.decidedAt,
        latency_ms: r.latencyMs,
        shadow_changed: r.shadowChanged,
        index_error: r.indexError,
      }),
    );
    return `${columns.slice(0, -1)},"record":${r.recordJson ?? "null"}}`;
  });
  return `[${rows.join(",")}]`;
}

// Minutes are epoch seconds computed in JavaScript from the stored time's milliseconds (exact:
// the same UTC minute as hookbus_minute()), so no Date is serialised per row.
const minuteOf = (t: Date) => Math.floor(t.getTime() / 60_000) * 60;

// $9: the minute of each policy row's record. A batch may hold one record twice (redelivered
// while its first delivery waited), so minutes are joined back DISTINCT by sequence.
const INSERT_POLICIES = `
WITH given AS (
SELECT * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
  $8::float8[], $9::bigint[]) AS x(seq, policy, version, mode, status, effect, latency_ms, minute)
), added AS (
INSERT INTO hookbus_policy_outcomes (ns, seq, policy, version, mode, status, effect, latency_ms)
SELECT $1, seq, policy, version, mode, status, effect, latency_ms FROM given
ON CONFLICT (ns, seq, policy) DO NOTHING
RETURNING seq, policy, status, latency_ms
)
INSERT INTO hookbus_minute_policies AS m (ns, minute, policy, status, bucket, outcomes)
SELECT $1, to_timestamp(t.minute), a.policy, a.status, hookbus_latency_bucket(a.latency_ms),
  count(*)
FROM added a JOIN (SELECT DISTINCT seq, minute FROM given) t ON t.seq = a.seq
GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5
ON CONFLICT (ns, minute, policy, status, bucket) DO UPDATE SET outcomes = m.outcomes + EXCLUDED.outcomes`;

const COUNT_RECORDS = `
INSERT INTO hookbus_minute_records AS m (ns, minute, hook, outcome, records)
SELECT $1, to_timestamp(x.minute), x.hook, x.outcome, x.records
FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS x(minute, hook, outcome, records)
ORDER BY 2, 3, 4
ON CONFLICT (ns, minute, hook, outcome) DO UPDATE SET records = m.records + EXCLUDED.records`;

/** Writes the batch and commits; resolves to the number of records that were new. */
export async function writeBatch(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
): Promise<number> {
  if (batch.length === 0) return 0;
  const p = batch.flatMap((x) => x.policies);
  const minutes = batch.flatMap((x) => {
    const minute = minuteOf(x.record.storedAt);
    return x.policies.map(() => minute);
  });
  return inTransaction(pool, async (client) => {
    const added = await client.query<AddedCount>(INSERT_RECORDS, [namespace, recordsJson(batch)]);
    if (p.length > 0)
      await client.query(INSERT_POLICIES, [
        namespace,
        ...columns(p, ["seq", "policy", "version", "mode", "status", "effect", "latencyMs"]),
        minutes,
      ]);
    const counted = added.rows.filter((x) => !x.invalid);
    if (counted.length > 0)
      await client.query(COUNT_RECORDS, [
        namespace,
        ...columns(counted, ["minute", "hook", "outcome", "n"]),
      ]);
    return added.rows.reduce((sum, x) => sum + x.n, 0);
  });
}

/** Rows as one array per column (the `unnest` parameters), in the order of `keys`. */
function columns<T>(rows: readonly T[], keys: readonly (keyof T)[]): unknown[][] {
  return keys.map((key) => rows.map((row) => row[key]));
}

/** The records one insert added, per minute (epoch seconds), hook and outcome. */
interface AddedCount {
  minute: string;
  hook: string;
  outcome: string;
  invalid: boolean;
  n: number;
}

/**
 * PostgreSQL refused the data itself (SQLSTATE class 22, data exception, e.g. a value a column
 * cannot hold; or 54, a limit): retrying the same batch would fail forever and stall the index.
 */
export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("54"));
}

/** A projection PostgreSQL refused, as an `invalid` row that says why (counted, not lost). */
function rejected(p: Projection, error: unknown): Projection {
  const { record: r } = p;
  const why = `HOOKBUS_INDEX_REJECTED: PostgreSQL refused the record: ${String((error as Error)?.message ?? error)}`;
  return invalidProjection(
    {
      seq: r.seq,
      subject: r.subject,
      storedAt: r.storedAt,
      address: {
        agentId: r.agentId,
        sessionKey: r.sessionKey,
        hook: r.hook,
        kind: r.outcome as ParsedAuditSubject["kind"],
      },
    },
    why,
  );
}

export interface IsolatedWrite {
  /** Records that were new. */
  added: number;
  /** Records written as `invalid` because PostgreSQL refused them. */
  rejected: number;
}

/**
 * Writes the batch; when PostgreSQL refuses its data, writes the records one by one instead, each
 * one it refuses as an `invalid` row with the reason, so one bad record never stalls the index.
 * Any other failure (connection, lock timeout) is thrown for the caller to retry.
 */
export async function writeBatchIsolating(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
): Promise<IsolatedWrite> {
  try {
    return { added: await writeBatch(pool, namespace, batch), rejected: 0 };
  } catch (error) {
    if (!isDataError(error) || batch.length === 0) throw error;
  }
  let added = 0;
  let refused = 0;
  for (const p of batch) {
    try {
      added += await writeBatch(pool, namespace, [p]);
    } catch (error) {
      if (!isDataError(error)) throw error;
      added += await writeBatch(pool, namespace, [rejected(p, error)]);
      refused++;
    }
  }
  return { added, rejected: refused };
}
