/**
 * Migration 005 (a policy's `ok` as two arrays of its record, the other statuses still rows) on
 * a real PostgreSQL: an index at schema version 4 holding decisions, a late verdict and an
 * observation upgrades in place; every policy row is still there in one form or the other, the
 * policy and status queries and the stats counted from rows answer as before; then the new
 * indexer's writes land in the upgraded tables, both ways.
 */
import { describe, expect, it } from "vitest";
import { migrateIndex, type PgPool } from "../../../src/indexer/index.js";
import { indexStats, queryIndex, type IndexFilter } from "../../../src/audit/pg/query.js";
import { projectRecord } from "../../../src/indexer/projection.js";
import { writeBatchIsolating } from "../../../src/indexer/writer.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { uniqueNamespace } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";

const postgres = usePostgres();

const context = { agentId: "a1", sessionKey: "s1", runId: "r1" };

/** Records as a version-4 indexer wrote them: seq, kind, outcome, record. */
const OLD_RECORDS: [number, string, string][] = [
  [1, "decision", "allow"],
  [2, "decision", "block"],
  [3, "late", "late"],
  [4, "observation", "observed"],
  [5, "decision", "allow"],
];

/** Their policy rows, every status in the table: seq, policy, status, latency. */
const OLD_POLICY_ROWS: [number, string, string, number | null][] = [
  [1, "p2", "ok", 2],
  [1, "p1", "ok", 1],
  [1, "p3", "timeout", 5],
  [2, "p1", "ok", 1.5],
  [2, "p2", "error", null],
  [3, "p2", "late", 30],
  [5, "p3", "ok", 0.5],
];

async function writeOldRows(pool: PgPool, ns: string): Promise<void> {
  for (const [seq, kind, outcome] of OLD_RECORDS)
    await pool.query(
      `INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id,
         session_key, run_id, hook, record)
       VALUES ($1, $2, $3, now(), $4, $5, 'a1', 's1', 'r1', 'before_tool_call', $6::json)`,
      [
        ns,
        seq,
        `${ns}.audit.a1.s1.before_tool_call.${outcome}`,
        kind,
        outcome,
        JSON.stringify({ v: 1, kind, hook: "before_tool_call", context }),
      ],
    );
  for (const [seq, policy, status, latency] of OLD_POLICY_ROWS)
    await pool.query(
      `INSERT INTO hookbus_policy_outcomes (ns, seq, policy, version, mode, status, effect, latency_ms)
       VALUES ($1, $2, $3, '1', 'enforce', $4, 'no-opinion', $5)`,
      [ns, seq, policy, status, latency],
    );
}

/** What the policy and status filters select, as sequences. */
const FILTERS: [IndexFilter, number[]][] = [
  [{ policy: "p1" }, [1, 2]],
  [{ policy: "p2" }, [1, 2, 3]],
  [{ policy: "p3" }, [1, 5]],
  [{ policy: "p3", status: "ok" }, [5]],
  [{ policy: "p3", status: "timeout" }, [1]],
  [{ policy: "p2", status: "ok" }, [1]],
  [{ status: "ok" }, [1, 2, 5]],
  [{ status: "error" }, [2]],
  [{ status: "late" }, [3]],
  [{ policy: "nobody" }, []],
];

async function expectSameAnswers(pool: PgPool, ns: string): Promise<void> {
  for (const [filter, seqs] of FILTERS)
    expect(
      (await queryIndex(pool, ns, filter)).entries.map((e) => e.seq),
      JSON.stringify(filter),
    ).toEqual(seqs);
  // Counted from the rows (an agent's stats: the rollups are not per agent).
  const stats = await indexStats(pool, ns, { agentId: "a1" });
  expect(stats.byPolicyStatus.map(({ policy, status, count }) => [policy, status, count])).toEqual([
    ["p1", "ok", 2],
    ["p2", "error", 1],
    ["p2", "late", 1],
    ["p2", "ok", 1],
    ["p3", "ok", 1],
    ["p3", "timeout", 1],
  ]);
  // p1's latencies 1 and 1.5 ms: p99 from 10 %-wide buckets, within 5 %.
  const p99 = stats.byPolicyStatus.find((r) => r.policy === "p1")!.p99Ms!;
  expect(Math.abs(p99 / 1.5 - 1)).toBeLessThanOrEqual(0.05);
}

describe("migration 005 on an index holding rows", () => {
  it("moves the ok rows into their records' arrays and keeps the rest: the queries answer as before", async () => {
    const { pool } = await postgres.database({ upTo: 4 });
    const ns = uniqueNamespace("mig5");
    await writeOldRows(pool, ns);
    const before = await pool.query("SELECT * FROM hookbus_records ORDER BY seq");
    const policyRows = async (table: string) =>
      (
        await pool.query<{ row: string }>(
          `SELECT (seq, policy, status, latency_ms)::text AS row FROM ${table} ORDER BY 1`,
        )
      ).rows.map((r) => r.row);
    const rowsBefore = await policyRows("hookbus_policy_outcomes");

    expect((await migrateIndex(pool)).applied).toEqual([5]);

    const after = await pool.query<Record<string, unknown>>(
      "SELECT * FROM hookbus_records ORDER BY seq",
    );
    expect(after.rows.map(({ ok_policies: _p, ok_latencies: _l, ...rest }) => rest)).toEqual(
      before.rows,
    );
    expect(after.rows.map((r) => [Number(r.seq), r.ok_policies, r.ok_latencies])).toEqual([
      [1, ["p1", "p2"], [1, 2]],
      [2, ["p1"], [1.5]],
      [3, null, null],
      [4, null, null],
      [5, ["p3"], [0.5]],
    ]);
    const rare = await pool.query(
      "SELECT seq::int, policy, version, mode, status, effect FROM hookbus_policy_outcomes ORDER BY seq",
    );
    expect(rare.rows).toEqual([
      {
        seq: 1,
        policy: "p3",
        version: "1",
        mode: "enforce",
        status: "timeout",
        effect: "no-opinion",
      },
      {
        seq: 2,
        policy: "p2",
        version: "1",
        mode: "enforce",
        status: "error",
        effect: "no-opinion",
      },
      { seq: 3, policy: "p2", version: "1", mode: "enforce", status: "late", effect: "no-opinion" },
    ]);
    // Every row of schema 4, in one shape again.
    expect(await policyRows("hookbus_policy_rows")).toEqual(rowsBefore);
    await expectSameAnswers(pool, ns);
    // With statistics, a policy's `ok` may be read in log order instead: the same answers.
    await pool.query("ANALYZE hookbus_records");
    await expectSameAnswers(pool, ns);
  });

  it("the upgraded tables take the new indexer's writes, both ways (new records and keyed)", async () => {
    const { pool } = await postgres.database({ upTo: 4 });
    const ns = uniqueNamespace("mig5w");
    await writeOldRows(pool, ns);
    await migrateIndex(pool);
    const subjects = new Subjects(ns);
    const project = (seq: number, status: string) => {
      const subject = subjects.audit("a1", "s1", "before_tool_call", "allow");
      const record = {
        v: 1,
        kind: "decision",
        callId: `c${seq}`,
        hook: "before_tool_call",
        context,
        outcomes: [
          { policy: "p1", status: "ok", latencyMs: 1 },
          { policy: "p3", status, latencyMs: 4 },
        ],
      };
      return projectRecord(
        { seq, subject, storedAt: new Date(), address: subjects.parseAudit(subject) },
        record,
        JSON.stringify(record),
      );
    };
    expect(
      await writeBatchIsolating(pool, ns, [project(10, "ok"), project(11, "timeout")], {
        asNew: true,
      }),
    ).toMatchObject({ added: 2, asNew: true });
    expect(
      await writeBatchIsolating(pool, ns, [project(11, "timeout"), project(12, "timeout")], {
        asNew: true,
      }),
    ).toMatchObject({ added: 1, asNew: false });
    expect(
      (await queryIndex(pool, ns, { policy: "p3", status: "ok" })).entries.map((e) => e.seq),
    ).toEqual([5, 10]);
    expect(
      (await queryIndex(pool, ns, { policy: "p3", status: "timeout" })).entries.map((e) => e.seq),
    ).toEqual([1, 11, 12]);
    expect((await queryIndex(pool, ns, { policy: "p1" })).entries.map((e) => e.seq)).toEqual([
      1, 2, 10, 11, 12,
    ]);
    // The rollups count the new records' rows of every status, once.
    const rolled = await pool.query<{ policy: string; status: string; n: number }>(
      `SELECT policy, status, sum(outcomes)::int AS n FROM hookbus_minute_policies
        WHERE ns = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
      [ns],
    );
    expect(rolled.rows).toEqual([
      { policy: "p1", status: "ok", n: 3 },
      { policy: "p3", status: "ok", n: 1 },
      { policy: "p3", status: "timeout", n: 2 },
    ]);
  });
});
