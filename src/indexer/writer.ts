/**
 * Writing a batch of projections: one transaction; the records (a policy's `ok` is two array
 * elements of its record: migrations/005), then the policy rows, COPYed in binary form into
 * staging tables and inserted from there with ON CONFLICT DO NOTHING, so a redelivered or
 * replayed record is written once. Only the rows of a rare status (timeout, error, late, …) are
 * rows of hookbus_policy_outcomes; the staging table holds every row, for the rollup. A batch of
 * any size is two COPY streams and a fixed number of statements. A batch of records not stored
 * yet (the common case) goes a shorter way: writeNewBatch, below.
 *
 * The per-minute rollups (migrations/002) count only the records the insert really added (it
 * RETURNs their sequences) and their policy rows: a record another indexer (or an earlier
 * delivery) wrote is neither stored nor counted twice. Every writer adds to the same rollup rows
 * (the current minute's), so the upserts come last, just before the commit, and each writer
 * holds those row locks briefly: policy rows first, then records (a handful of rows per batch).
 * Keys are upserted in key order, policies' before records', so writers that share minutes wait
 * for each other instead of deadlocking.
 */
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom } from "pg-copy-streams";
import { inTransaction, type PgClient, type PgPool } from "../audit/pg/pool.js";
import type { ParsedAuditSubject } from "../bus/subjects.js";
import { CopyRows } from "./copy-binary.js";
import { invalidProjection, type PolicyRow, type Projection } from "./projection.js";

/**
 * Staging tables, one pair per connection (temporary, emptied at every commit): a batch is
 * COPYed into them in binary form, then inserted from them with ON CONFLICT DO NOTHING (COPY
 * itself cannot skip existing keys). The registry revision is staged as text and cast on insert,
 * so a value no bigint holds is refused by PostgreSQL as before (a data error: writeBatchIsolating).
 */
const CREATE_STAGE = `
CREATE TEMP TABLE IF NOT EXISTS hookbus_stage_records (seq bigint, subject text,
  stored_at timestamptz, kind text, outcome text, agent_id text, session_key text, run_id text,
  hook text, call_id text, blocked_by text, registry_revision text, received_at timestamptz,
  decided_at timestamptz, latency_ms float8, shadow_changed boolean, index_error text,
  decision_seq bigint, sealed_for text, record json, ok_policies text[],
  ok_latencies float8[]) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS hookbus_stage_policies (seq bigint, policy text, version text,
  mode text, status text, effect text, latency_ms float8, minute bigint) ON COMMIT DELETE ROWS`;

// pg_temp named: never a table of that name elsewhere on the search path.
const COPY_RECORDS = "COPY pg_temp.hookbus_stage_records FROM STDIN (FORMAT binary)";
const COPY_POLICIES = "COPY pg_temp.hookbus_stage_policies FROM STDIN (FORMAT binary)";

// Returns the sequences it added: the policy rows and the rollups count those records alone
// (the rollups are upserted last, see above). In sequence order (see batch-writer).
const INSERT_RECORDS = `
INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id, session_key,
  run_id, hook, call_id, blocked_by, registry_revision, received_at, decided_at, latency_ms,
  shadow_changed, index_error, decision_seq, sealed_for, record, ok_policies, ok_latencies)
SELECT $1, x.seq, x.subject, x.stored_at, x.kind, x.outcome, x.agent_id, x.session_key, x.run_id,
  x.hook, x.call_id, x.blocked_by, x.registry_revision::bigint, x.received_at, x.decided_at,
  x.latency_ms, x.shadow_changed, x.index_error, x.decision_seq, x.sealed_for, x.record,
  x.ok_policies, x.ok_latencies
FROM pg_temp.hookbus_stage_records x ORDER BY x.seq
ON CONFLICT (ns, seq) DO NOTHING
RETURNING seq`;

/**
 * The batch's record rows as one binary COPY stream; a record's stored bytes go in as they are.
 * With `namespace`, the rows of hookbus_records itself (COPY_NEW_RECORDS: the namespace first,
 * the revision as a bigint); without, the staging table's.
 */
function recordRows(batch: readonly Projection[], namespace?: string): Buffer {
  let expected = 64;
  for (const { record } of batch) expected += 400 + (record.recordJson?.length ?? 0);
  const rows = new CopyRows(expected);
  for (const { record: r, policies } of batch) {
    rows.row(namespace === undefined ? 22 : 23);
    if (namespace !== undefined) rows.text(namespace);
    rows.int8(r.seq);
    rows.text(r.subject);
    rows.timestamptz(r.storedAt);
    rows.text(r.kind);
    rows.text(r.outcome);
    rows.text(r.agentId);
    rows.text(r.sessionKey);
    rows.text(r.runId);
    rows.text(r.hook);
    rows.text(r.callId);
    rows.text(r.blockedBy);
    if (namespace === undefined)
      rows.text(r.registryRevision === null ? null : String(r.registryRevision));
    else if (r.registryRevision === null) rows.null();
    else rows.int8(r.registryRevision);
    rows.timestamptz(r.receivedAt);
    rows.timestamptz(r.decidedAt);
    rows.float8(r.latencyMs);
    rows.bool(r.shadowChanged);
    rows.text(r.indexError);
    if (r.decisionSeq === null) rows.null();
    else rows.int8(r.decisionSeq);
    rows.text(r.sealedFor);
    rows.json(r.recordJson);
    const ok = policies.filter(isOk);
    rows.textArray(ok, (p) => p.policy);
    rows.float8Array(ok, (p) => p.latencyMs);
  }
  return rows.finish();
}

/**
 * A policy row of status `ok` is two array elements of its record (migrations/005); the other
 * statuses are rows of hookbus_policy_outcomes.
 */
const isOk = (p: PolicyRow) => p.status === "ok";

/**
 * The batch's policy rows, all of them (the rollup counts every status), as one binary COPY
 * stream for the staging table (undefined when it has none).
 */
function policyRows(batch: readonly Projection[]): Buffer | undefined {
  let count = 0;
  for (const p of batch) count += p.policies.length;
  if (count === 0) return undefined;
  const rows = new CopyRows(64 + 160 * count);
  for (const { record, policies } of batch) {
    const minute = minuteOf(record.storedAt);
    for (const p of policies) {
      rows.row(8);
      rows.int8(p.seq);
      rows.text(p.policy);
      rows.text(p.version);
      rows.text(p.mode);
      rows.text(p.status);
      rows.text(p.effect);
      rows.float8(p.latencyMs);
      rows.int8(minute);
    }
  }
  return rows.finish();
}

async function copyInto(client: PgClient, command: string, rows: Buffer): Promise<void> {
  await pipeline(Readable.from([rows]), client.query(copyFrom(command)));
}

// Minutes are epoch seconds computed in JavaScript from the stored time's milliseconds (exact:
// the same UTC minute as hookbus_minute()), so no Date is serialised per row.
const minuteOf = (t: Date) => Math.floor(t.getTime() / 60_000) * 60;

// The policy rows of the records the insert added ($2): a batch may hold one record twice
// (redelivered while its first delivery waited), so each (seq, policy) is taken once. The rows
// of a rare status are inserted (ON CONFLICT, as the records: a row of the same key never fails
// the batch); every row is counted in the rollup.
const INSERT_POLICIES = `
WITH given AS (
SELECT DISTINCT ON (seq, policy) * FROM pg_temp.hookbus_stage_policies
WHERE seq = ANY($2::bigint[]) ORDER BY seq, policy
), rare AS (
INSERT INTO hookbus_policy_outcomes (ns, seq, policy, version, mode, status, effect, latency_ms)
SELECT $1, seq, policy, version, mode, status, effect, latency_ms FROM given WHERE status <> 'ok'
ON CONFLICT (ns, seq, policy) DO NOTHING
)
INSERT INTO hookbus_minute_policies AS m (ns, minute, policy, status, bucket, outcomes)
SELECT $1, to_timestamp(minute), policy, status, hookbus_latency_bucket(latency_ms), count(*)
FROM given
GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5
ON CONFLICT (ns, minute, policy, status, bucket) DO UPDATE SET outcomes = m.outcomes + EXCLUDED.outcomes`;

const COUNT_RECORDS = `
INSERT INTO hookbus_minute_records AS m (ns, minute, hook, outcome, records)
SELECT $1, to_timestamp(x.minute), x.hook, x.outcome, x.records
FROM unnest($2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS x(minute, hook, outcome, records)
ORDER BY 2, 3, 4
ON CONFLICT (ns, minute, hook, outcome) DO UPDATE SET records = m.records + EXCLUDED.records`;

/**
 * The new-records path (issue 35.3): a batch none of whose records is stored yet is COPYed
 * straight into hookbus_records, with no staging table, no ON CONFLICT and no RETURNING: about a
 * quarter of PostgreSQL's work per record (bench/index-cost.ts, docs/performance.md). If one of
 * them is stored after all (a redelivery, a replay, another indexer), the key refuses the COPY
 * (unique_violation), the transaction is rolled back whole, and the batch is written by the
 * keyed path above: nothing is stored or counted twice either way. Every record being new, the
 * rollups count the batch itself.
 */
const COPY_NEW_RECORDS = `COPY hookbus_records (ns, seq, subject, stored_at, kind, outcome,
  agent_id, session_key, run_id, hook, call_id, blocked_by, registry_revision, received_at,
  decided_at, latency_ms, shadow_changed, index_error, decision_seq, sealed_for, record,
  ok_policies, ok_latencies)
  FROM STDIN (FORMAT binary)`;

// The policy rows of new records are new too (a record's rows are written in its transaction;
// the projection keeps one row per policy, and a row the key refuses anyway sends the batch the
// keyed way). Only the rare statuses are rows; the rollup counts all. Rollup keys in key order,
// policies' before records' (see the top of the file).
const INSERT_NEW_POLICIES = `
WITH rare AS (
INSERT INTO hookbus_policy_outcomes (ns, seq, policy, version, mode, status, effect, latency_ms)
SELECT $1, seq, policy, version, mode, status, effect, latency_ms
FROM pg_temp.hookbus_stage_policies WHERE status <> 'ok' ORDER BY seq, policy
)
INSERT INTO hookbus_minute_policies AS m (ns, minute, policy, status, bucket, outcomes)
SELECT $1, to_timestamp(minute), policy, status, hookbus_latency_bucket(latency_ms), count(*)
FROM pg_temp.hookbus_stage_policies
GROUP BY 2, 3, 4, 5 ORDER BY 2, 3, 4, 5
ON CONFLICT (ns, minute, policy, status, bucket) DO UPDATE SET outcomes = m.outcomes + EXCLUDED.outcomes`;

/** PostgreSQL's unique_violation: a record of the batch is stored already. */
function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === "23505";
}

/**
 * Whether the new-records path can take the batch: every revision fits a bigint as it is (the
 * keyed path stages it as text, so PostgreSQL refuses one that does not, as a data error).
 */
function newPathFits(batch: readonly Projection[]): boolean {
  return batch.every(
    ({ record: r }) => r.registryRevision === null || Number.isSafeInteger(r.registryRevision),
  );
}

/** The records per minute, hook and outcome (invalid ones left out), as columns. */
function recordCounts(records: Iterable<Projection>): unknown[][] {
  const counts = new Map<string, AddedCount>();
  for (const { record: r } of records) {
    if (r.kind === "invalid") continue;
    const minute = minuteOf(r.storedAt);
    const key = `${minute}\n${r.hook}\n${r.outcome}`;
    const found = counts.get(key);
    if (found !== undefined) found.n++;
    else counts.set(key, { minute: String(minute), hook: r.hook, outcome: r.outcome, n: 1 });
  }
  return columns([...counts.values()], ["minute", "hook", "outcome", "n"]);
}

/** Writes a batch of records none of which is stored yet; throws unique_violation if one is. */
async function writeNewBatch(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
): Promise<number> {
  const records = recordRows(batch, namespace);
  const policies = policyRows(batch);
  const counted = recordCounts(batch);
  let used: PgClient | undefined;
  await inTransaction(pool, async (client) => {
    if (!staged.has(client)) await client.query(CREATE_STAGE);
    used = client;
    await copyInto(client, COPY_NEW_RECORDS, records);
    if (policies !== undefined) {
      await copyInto(client, COPY_POLICIES, policies);
      await client.query(INSERT_NEW_POLICIES, [namespace]);
    }
    if (counted[0]!.length > 0) await client.query(COUNT_RECORDS, [namespace, ...counted]);
  });
  if (used !== undefined) staged.add(used);
  return batch.length;
}

/** Connections whose staging tables exist (created by a transaction that committed). */
const staged = new WeakSet<PgClient>();

/** Writes the batch and commits; resolves to the number of records that were new. */
export async function writeBatch(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
): Promise<number> {
  if (batch.length === 0) return 0;
  const records = recordRows(batch);
  const policies = policyRows(batch);
  let used: PgClient | undefined;
  const n = await inTransaction(pool, async (client) => {
    if (!staged.has(client)) await client.query(CREATE_STAGE);
    used = client;
    await copyInto(client, COPY_RECORDS, records);
    const inserted = await client.query<{ seq: string }>(INSERT_RECORDS, [namespace]);
    const added = inserted.rows.map((x) => Number(x.seq));
    if (policies !== undefined && added.length > 0) {
      await copyInto(client, COPY_POLICIES, policies);
      await client.query(INSERT_POLICIES, [namespace, added]);
    }
    const counted = recordCounts(onceEach(batch, new Set(added)));
    if (counted[0]!.length > 0) await client.query(COUNT_RECORDS, [namespace, ...counted]);
    return added.length;
  });
  if (used !== undefined) staged.add(used);
  return n;
}

/** Rows as one array per column (the `unnest` parameters), in the order of `keys`. */
function columns<T>(rows: readonly T[], keys: readonly (keyof T)[]): unknown[][] {
  return keys.map((key) => rows.map((row) => row[key]));
}

/** The batch's records at the `added` sequences, each once (a batch may hold one twice). */
function* onceEach(batch: readonly Projection[], added: ReadonlySet<number>): Iterable<Projection> {
  const seen = new Set<number>();
  for (const p of batch)
    if (added.has(p.record.seq) && !seen.has(p.record.seq)) {
      seen.add(p.record.seq);
      yield p;
    }
}

/** Records per minute (epoch seconds), hook and outcome. */
interface AddedCount {
  minute: string;
  hook: string;
  outcome: string;
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
  /** Whether the batch went the new-records path (else the keyed one). */
  asNew: boolean;
}

/**
 * Writes the batch (`asNew`: by the new-records path first, see writeNewBatch); when PostgreSQL
 * refuses its data, writes the records one by one instead, each one it refuses as an `invalid`
 * row with the reason, so one bad record never stalls the index. Any other failure (connection,
 * lock timeout) is thrown for the caller to retry.
 */
export async function writeBatchIsolating(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
  { asNew = false }: { asNew?: boolean } = {},
): Promise<IsolatedWrite> {
  if (asNew && batch.length > 0 && newPathFits(batch))
    try {
      return { added: await writeNewBatch(pool, namespace, batch), rejected: 0, asNew: true };
    } catch (error) {
      // Stored already, or refused data: the keyed path sorts out which.
      if (!isUniqueViolation(error) && !isDataError(error)) throw error;
    }
  try {
    return { added: await writeBatch(pool, namespace, batch), rejected: 0, asNew: false };
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
  return { added, rejected: refused, asNew: false };
}
