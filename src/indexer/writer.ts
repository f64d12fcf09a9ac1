/**
 * Writing a batch of projections: one transaction, two multi-row inserts (`unnest` of one array
 * per column, so a batch of any size is one statement with a fixed number of parameters), and
 * ON CONFLICT DO NOTHING, so a redelivered or replayed record is written once.
 */
import { inTransaction, type PgPool } from "./pg.js";
import type { Projection } from "./projection.js";

const INSERT_RECORDS = `
INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id, session_key,
  run_id, hook, call_id, blocked_by, registry_revision, received_at, decided_at, latency_ms,
  shadow_changed, index_error, record)
SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::timestamptz[], $5::text[], $6::text[],
  $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[],
  $14::timestamptz[], $15::timestamptz[], $16::float8[], $17::boolean[], $18::text[], $19::jsonb[])
ON CONFLICT (ns, seq) DO NOTHING`;

const INSERT_POLICIES = `
INSERT INTO hookbus_policy_outcomes (ns, seq, policy, version, mode, status, effect, latency_ms)
SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[],
  $7::text[], $8::float8[])
ON CONFLICT (ns, seq, policy) DO NOTHING`;

/** Writes the batch and commits; resolves to the number of records that were new. */
export async function writeBatch(
  pool: PgPool,
  namespace: string,
  batch: readonly Projection[],
): Promise<number> {
  if (batch.length === 0) return 0;
  const r = batch.map((p) => p.record);
  const p = batch.flatMap((x) => x.policies);
  return inTransaction(pool, async (client) => {
    const inserted = await client.query(INSERT_RECORDS, [
      namespace,
      r.map((x) => x.seq),
      r.map((x) => x.subject),
      r.map((x) => x.storedAt),
      r.map((x) => x.kind),
      r.map((x) => x.outcome),
      r.map((x) => x.agentId),
      r.map((x) => x.sessionKey),
      r.map((x) => x.runId),
      r.map((x) => x.hook),
      r.map((x) => x.callId),
      r.map((x) => x.blockedBy),
      r.map((x) => x.registryRevision),
      r.map((x) => x.receivedAt),
      r.map((x) => x.decidedAt),
      r.map((x) => x.latencyMs),
      r.map((x) => x.shadowChanged),
      r.map((x) => x.indexError),
      r.map((x) => x.recordJson),
    ]);
    if (p.length > 0)
      await client.query(INSERT_POLICIES, [
        namespace,
        p.map((x) => x.seq),
        p.map((x) => x.policy),
        p.map((x) => x.version),
        p.map((x) => x.mode),
        p.map((x) => x.status),
        p.map((x) => x.effect),
        p.map((x) => x.latencyMs),
      ]);
    return inserted.rowCount ?? 0;
  });
}
