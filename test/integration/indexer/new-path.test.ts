/**
 * The indexer's two ways of writing a batch, on a real PostgreSQL (issue 35.3): a batch of new
 * records COPYed straight into the tables leaves exactly the rows and per-minute counts the keyed
 * path (staging, ON CONFLICT, RETURNING) leaves; a batch holding one stored record falls back to
 * the keyed path, which writes the others once and counts nothing twice; a revision no bigint
 * holds goes the keyed path as before (written as `invalid` with PostgreSQL's reason).
 */
import { describe, expect, it } from "vitest";
import { Subjects } from "../../../src/bus/subjects.js";
import type { PgPool } from "../../../src/indexer/index.js";
import { projectBytes, type Projection } from "../../../src/indexer/projection.js";
import { writeBatchIsolating } from "../../../src/indexer/writer.js";
import { syntheticRecord } from "../../support/synthetic-log.js";
import { usePostgres } from "../../support/postgres.js";

const postgres = usePostgres();
const NS = "newpath";
const subjects = new Subjects(NS);
const T0 = Date.parse("2026-12-01T10:00:00Z");

/** Record `i` as the indexer projects it, stored 7 s after the one before (minutes change). */
function projection(i: number, edit?: (record: Record<string, unknown>) => void): Projection {
  const { record, agentId, sessionKey, kind } = syntheticRecord(i, { sessions: 7, agents: 3 });
  edit?.(record);
  const subject = subjects.audit(agentId, sessionKey, record.hook as "before_tool_call", kind);
  const stored = {
    seq: i + 1,
    subject,
    storedAt: new Date(T0 + i * 7000),
    address: subjects.parseAudit(subject),
  };
  const bytes = new TextEncoder().encode(JSON.stringify(record));
  const projected = projectBytes(stored, bytes, 64);
  if (projected === undefined) throw new Error(`record ${i} not projected`);
  return projected;
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, k) => projection(from + k));

/** Every table of the index, as sorted text rows (what two indexes must agree on). */
async function contents(pool: PgPool): Promise<Record<string, string[]>> {
  const tables = {
    records:
      "SELECT seq, subject, stored_at, kind, outcome, agent_id, session_key, run_id, hook, call_id, blocked_by, registry_revision, received_at, decided_at, latency_ms, shadow_changed, index_error, record, ok_policies, ok_latencies FROM hookbus_records",
    policies: "SELECT * FROM hookbus_policy_outcomes",
    policyRows: "SELECT * FROM hookbus_policy_rows",
    minuteRecords: "SELECT * FROM hookbus_minute_records",
    minutePolicies: "SELECT * FROM hookbus_minute_policies",
  };
  const out: Record<string, string[]> = {};
  for (const [name, sql] of Object.entries(tables)) {
    const r = await pool.query(`SELECT t::text AS row FROM (${sql}) t`);
    out[name] = r.rows.map((x: { row: string }) => x.row).sort();
  }
  return out;
}

describe("writing a batch of new records straight into the tables", () => {
  it("leaves the same rows and per-minute counts as the keyed path", async () => {
    const keyed = await postgres.database();
    const asNew = await postgres.database();
    for (const [from, to] of [
      [0, 150],
      [150, 400],
    ] as const) {
      const batch = range(from, to);
      expect(await writeBatchIsolating(keyed.pool, NS, batch)).toEqual({
        added: to - from,
        rejected: 0,
        asNew: false,
      });
      expect(await writeBatchIsolating(asNew.pool, NS, batch, { asNew: true })).toEqual({
        added: to - from,
        rejected: 0,
        asNew: true,
      });
    }
    const expected = await contents(keyed.pool);
    expect(expected.minuteRecords!.length).toBeGreaterThan(10);
    expect(await contents(asNew.pool)).toEqual(expected);
  });

  it("falls back to the keyed path when a record is stored already, and counts nothing twice", async () => {
    const keyed = await postgres.database();
    const fallback = await postgres.database();
    const all = range(0, 300);
    await writeBatchIsolating(keyed.pool, NS, all);
    await writeBatchIsolating(fallback.pool, NS, all.slice(100, 101), { asNew: true });
    await writeBatchIsolating(fallback.pool, NS, all.slice(200, 250), { asNew: true });
    // 51 stored among new ones: the COPY meets the key, the keyed path writes the rest.
    expect(await writeBatchIsolating(fallback.pool, NS, all, { asNew: true })).toEqual({
      added: 249,
      rejected: 0,
      asNew: false,
    });
    expect(await contents(fallback.pool)).toEqual(await contents(keyed.pool));
  });

  it("writes a revision no bigint holds the keyed way: invalid, with PostgreSQL's reason", async () => {
    const { pool } = await postgres.database();
    expect(await writeBatchIsolating(pool, NS, [projection(0)], { asNew: true })).toEqual({
      added: 1,
      rejected: 0,
      asNew: true,
    });
    const huge = projection(1, (record) => (record.registryRevision = 1e30));
    expect(await writeBatchIsolating(pool, NS, [huge], { asNew: true })).toEqual({
      added: 1,
      rejected: 1,
      asNew: false,
    });
    const rows = await pool.query<{ seq: number; kind: string; policies: number }>(
      "SELECT seq::int, kind, (SELECT count(*)::int FROM hookbus_policy_rows p WHERE p.seq = r.seq) AS policies FROM hookbus_records r ORDER BY seq",
    );
    expect(rows.rows).toEqual([
      { seq: 1, kind: "decision", policies: 3 },
      { seq: 2, kind: "invalid", policies: 0 },
    ]);
    const reason = await pool.query<{ index_error: string }>(
      "SELECT index_error FROM hookbus_records WHERE seq = 2",
    );
    expect(reason.rows.length).toBe(1);
    expect(reason.rows[0]!.index_error).toMatch(/^HOOKBUS_INDEX_REJECTED: PostgreSQL refused/);
  });
});
