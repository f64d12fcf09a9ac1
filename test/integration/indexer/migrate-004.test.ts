/**
 * Migration 004 (record as json, decision_seq and sealed_for columns, the rare-status index) on a
 * real PostgreSQL: an index at schema version 3 holding rows of every kind upgrades in place with
 * no row lost or changed, the new columns are backfilled from the records, and the queries that
 * read them (pending approvals, erasure's scrub, a rare status) answer as before; then the new
 * indexer's writes land in the upgraded table.
 */
import { describe, expect, it } from "vitest";
import { migrateIndex, type PgPool } from "../../../src/indexer/index.js";
import {
  approvalSettlements,
  pendingApprovalDecisions,
  queryIndex,
} from "../../../src/audit/pg/query.js";
import { scrubErasedRows } from "../../../src/audit/pg/scrub.js";
import { projectRecord } from "../../../src/indexer/projection.js";
import { writeBatchIsolating } from "../../../src/indexer/writer.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { uniqueNamespace } from "../../support/nats.js";
import { migrateUpTo, usePostgres } from "../../support/postgres.js";

const postgres = usePostgres();

const SUBJECT = "a".repeat(64);
const sealed = (ct: boolean) => ({
  alg: "A256GCM",
  subject: SUBJECT,
  kid: "k1",
  paths: ["/event/params/path"],
  ...(ct ? { iv: "aXY=", tag: "dGFn", ct: "Y3Q=" } : {}),
});
const context = { agentId: "a1", sessionKey: "s1", runId: "r1" };

/** Rows as a version-3 indexer wrote them: seq, kind, outcome, record (null: invalid). */
const OLD_ROWS: [number, string, string, unknown][] = [
  [
    1,
    "decision",
    "pending_approval",
    { v: 1, kind: "decision", callId: "c1", hook: "before_tool_call", context },
  ],
  [
    2,
    "decision",
    "pending_approval",
    { v: 1, kind: "decision", callId: "c2", hook: "before_tool_call", context },
  ],
  [3, "approval", "allow", { v: 1, kind: "approval", callId: "c1", decisionSeq: 1, context }],
  // An approval naming no usable decision: backfilled as null, never a failed migration.
  [4, "approval", "allow", { v: 1, kind: "approval", callId: "cx", decisionSeq: "7", context }],
  [
    5,
    "decision",
    "allow",
    {
      v: 1,
      kind: "decision",
      callId: "c5",
      hook: "before_tool_call",
      context,
      event: { params: { path: "[encrypted]" } },
      encrypted: sealed(true),
    },
  ],
  // Scrubbed by an earlier erasure: nothing sealed is left in it.
  [
    6,
    "decision",
    "allow",
    {
      v: 1,
      kind: "decision",
      callId: "c6",
      hook: "before_tool_call",
      context,
      encrypted: sealed(false),
    },
  ],
  [7, "invalid", "error", null],
];

async function writeOldRows(pool: PgPool, ns: string): Promise<void> {
  for (const [seq, kind, outcome, record] of OLD_ROWS)
    await pool.query(
      `INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id,
         session_key, run_id, hook, call_id, record)
       VALUES ($1, $2, $3, now(), $4, $5, 'a1', 's1', 'r1', 'before_tool_call', $6, $7::jsonb)`,
      [
        ns,
        seq,
        `${ns}.audit.a1.s1.before_tool_call.${outcome}`,
        kind,
        outcome,
        (record as { callId?: string } | null)?.callId ?? null,
        record === null ? null : JSON.stringify(record),
      ],
    );
  await pool.query(
    `INSERT INTO hookbus_policy_outcomes (ns, seq, policy, status) VALUES
       ($1, 1, 'p', 'ok'), ($1, 2, 'p', 'timeout'), ($1, 5, 'p', 'ok')`,
    [ns],
  );
}

describe("migration 004 on an index holding rows", () => {
  it("upgrades in place: every row kept, the new columns backfilled, the queries answer as before", async () => {
    const { pool } = await postgres.database({ upTo: 3 });
    const ns = uniqueNamespace("mig4");
    await writeOldRows(pool, ns);
    const before = await pool.query("SELECT * FROM hookbus_records ORDER BY seq");

    expect(await migrateUpTo(pool, 4)).toEqual([4]);

    const type = await pool.query<{ t: string }>(
      "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute WHERE attrelid = 'hookbus_records'::regclass AND attname = 'record'",
    );
    expect(type.rows[0]!.t).toBe("json");
    const after = await pool.query<Record<string, unknown>>(
      "SELECT * FROM hookbus_records ORDER BY seq",
    );
    // The same rows, every column as it was (the record the same JSON), plus the two new ones.
    expect(after.rows.map(({ decision_seq: _d, sealed_for: _s, ...rest }) => rest)).toEqual(
      before.rows,
    );
    expect(
      after.rows.map((r) => [
        Number(r.seq),
        r.decision_seq === null ? null : Number(r.decision_seq),
        r.sealed_for,
      ]),
    ).toEqual([
      [1, null, null],
      [2, null, null],
      [3, 1, null],
      [4, null, null],
      [5, null, SUBJECT],
      [6, null, null],
      [7, null, null],
    ]);

    // The queries are this hookbus's: they read the schema it migrates to (005 moves the ok rows).
    expect((await migrateIndex(pool)).applied).toEqual([5]);
    // Pending: decision 2 (decision 1 is settled by approval 3).
    const pending = await pendingApprovalDecisions(pool, ns, { limit: 100 });
    expect(pending.entries.map((e) => e.seq)).toEqual([2]);
    expect((await approvalSettlements(pool, ns, { limit: 100 })).entries.map((e) => e.seq)).toEqual(
      [4, 3],
    );
    // A rare status, through the partial index's condition.
    expect((await queryIndex(pool, ns, { status: "timeout" })).entries.map((e) => e.seq)).toEqual([
      2,
    ]);
    expect((await queryIndex(pool, ns, { status: "ok" })).entries.map((e) => e.seq)).toEqual([
      1, 5,
    ]);

    // Erasure scrubs the one row still sealed, once.
    expect(await scrubErasedRows(pool, ns, SUBJECT)).toBe(1);
    expect(await scrubErasedRows(pool, ns, SUBJECT)).toBe(0);
    const scrubbed = await pool.query<{ record: { encrypted: Record<string, unknown> } }>(
      "SELECT record FROM hookbus_records WHERE ns = $1 AND seq = 5",
      [ns],
    );
    expect(scrubbed.rows[0]!.record.encrypted).toEqual(sealed(false));
  });

  it("the upgraded table takes the new indexer's writes, both ways (new records and keyed)", async () => {
    const { pool } = await postgres.database({ upTo: 3 });
    const ns = uniqueNamespace("mig4w");
    await writeOldRows(pool, ns);
    await migrateIndex(pool);
    const subjects = new Subjects(ns);
    const project = (seq: number, record: Record<string, unknown>) => {
      const subject = subjects.audit("a1", "s1", "before_tool_call", "allow");
      return projectRecord(
        { seq, subject, storedAt: new Date(), address: subjects.parseAudit(subject) },
        record,
        JSON.stringify(record),
      );
    };
    const approval = { v: 1, kind: "approval", callId: "c2", decisionSeq: 2, context };
    const sealedRecord = { v: 1, kind: "decision", callId: "c9", context, encrypted: sealed(true) };
    // New records (COPY straight into the table), then one stored already (the keyed path).
    const first = await writeBatchIsolating(
      pool,
      ns,
      [project(10, approval), project(11, sealedRecord)],
      { asNew: true },
    );
    expect(first).toMatchObject({ added: 2, asNew: true });
    const again = await writeBatchIsolating(
      pool,
      ns,
      [project(11, sealedRecord), project(12, approval)],
      { asNew: true },
    );
    expect(again).toMatchObject({ added: 1, asNew: false });
    const rows = await pool.query<{
      seq: string;
      decision_seq: string | null;
      sealed_for: string | null;
      record: unknown;
    }>(
      "SELECT seq, decision_seq, sealed_for, record FROM hookbus_records WHERE ns = $1 AND seq >= 10 ORDER BY seq",
      [ns],
    );
    expect(rows.rows).toEqual([
      { seq: "10", decision_seq: "2", sealed_for: null, record: approval },
      { seq: "11", decision_seq: null, sealed_for: SUBJECT, record: sealedRecord },
      { seq: "12", decision_seq: "2", sealed_for: null, record: approval },
    ]);
    // Decision 2 is settled now: nothing is pending.
    expect((await pendingApprovalDecisions(pool, ns, { limit: 100 })).entries).toEqual([]);
    // Erasure finds both sealed rows: the migrated one and the new one.
    expect(await scrubErasedRows(pool, ns, SUBJECT)).toBe(2);
  });
});
