/**
 * The indexer on a real NATS server and a real PostgreSQL: every record indexed once, keyed by
 * stream sequence; replaying the log (a new consumer from the start) writes nothing twice; two
 * indexers sharing the consumer split the work without losing or doubling a record; an indexer
 * killed while it cannot commit has acked nothing, and another indexer picks its records up at
 * once (not after the durable's ack wait).
 */
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { main } from "../../../src/cli/main.js";
import { indexLag, migrateIndex, startIndexer, type Indexer } from "../../../src/indexer/index.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();
const running: Indexer[] = [];
afterAll(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

async function setup(records: number, sessions = 50) {
  const namespace = uniqueNamespace("idx");
  const bus = await Bus.open(await nats.connect(), { namespace });
  await publishSyntheticLog(bus, { records, sessions, agents: 5 });
  const { url, pool } = await postgres.database();
  return { namespace, bus, url, pool };
}

async function count(pool: Awaited<ReturnType<typeof setup>>["pool"], namespace: string) {
  const r = await pool.query<{ n: string; distinct_seq: string; min: string; max: string }>(
    "SELECT count(*) AS n, count(DISTINCT seq) AS distinct_seq, min(seq) AS min, max(seq) AS max FROM hookbus_records WHERE ns = $1",
    [namespace],
  );
  const row = r.rows[0]!;
  return {
    rows: Number(row.n),
    distinct: Number(row.distinct_seq),
    min: Number(row.min),
    max: Number(row.max),
  };
}

async function start(options: Parameters<typeof startIndexer>[0]) {
  const indexer = await startIndexer(options);
  running.push(indexer);
  return indexer;
}

describe("hookbus indexer", () => {
  it("indexes every record once with its columns and policy rows, and reports no lag when done", async () => {
    const { namespace, bus, pool } = await setup(500);
    const indexer = await start({ bus, pool, batchSize: 100 });
    await until(async () => (await count(pool, namespace)).rows === 500, 20_000, "500 rows");
    expect(await count(pool, namespace)).toEqual({ rows: 500, distinct: 500, min: 1, max: 500 });
    await until(async () => (await indexer.lag()).records === 0, 10_000, "no lag");
    expect(await indexer.lag()).toEqual({ records: 0, seconds: 0 });

    // Record 3 (i = 2) is `exec`: blocked by no-shell. Record 4 (i = 3) is `write_file`: the
    // shadow policy would have blocked it. Record 10 (i = 9) is an observation.
    const rows = await pool.query(
      `SELECT seq::int, kind, outcome, agent_id, session_key, run_id, hook, call_id, blocked_by,
              registry_revision::int, shadow_changed, record->>'callId' AS record_call
       FROM hookbus_records WHERE ns = $1 AND seq IN (3, 4, 10) ORDER BY seq`,
      [namespace],
    );
    expect(rows.rows).toEqual([
      expect.objectContaining({
        seq: 3,
        kind: "decision",
        outcome: "block",
        agent_id: "agent-2",
        session_key: "session-2",
        run_id: "run-2",
        hook: "before_tool_call",
        call_id: "call-2",
        blocked_by: "no-shell",
        registry_revision: 3,
        shadow_changed: false,
        record_call: "call-2",
      }),
      expect.objectContaining({ seq: 4, outcome: "allow", blocked_by: null, shadow_changed: true }),
      expect.objectContaining({
        seq: 10,
        kind: "observation",
        outcome: "observed",
        hook: "after_tool_call",
        call_id: "ev-9",
      }),
    ]);
    // A policy's `ok` is an element of its record's arrays, in the record's order with its
    // latency; any other status is a row (migrations/005). Record 1 (i = 0): path-guard timed out.
    const policies = await pool.query(
      `SELECT seq::int, ok_policies, ok_latencies,
         (SELECT json_agg(json_build_object('policy', p.policy, 'version', p.version, 'mode', p.mode,
            'status', p.status, 'effect', p.effect, 'latency_ms', p.latency_ms))
            FROM hookbus_policy_outcomes p WHERE p.ns = r.ns AND p.seq = r.seq) AS rows
       FROM hookbus_records r WHERE ns = $1 AND seq IN (1, 3, 10) ORDER BY seq`,
      [namespace],
    );
    expect(policies.rows).toEqual([
      {
        seq: 1,
        ok_policies: ["no-shell", "candidate"],
        ok_latencies: [0.4, 0.8],
        rows: [
          {
            policy: "path-guard",
            version: "2.1.0",
            mode: "enforce",
            status: "timeout",
            effect: "failed-open",
            latency_ms: 1,
          },
        ],
      },
      {
        seq: 3,
        ok_policies: ["no-shell", "path-guard", "candidate"],
        ok_latencies: [0.4 + 2 * 0.1, 1 + 2 * 0.2, 0.8],
        rows: null,
      },
      // An observation asks no policy.
      { seq: 10, ok_policies: null, ok_latencies: null, rows: null },
    ]);
    expect(indexer.stats).toMatchObject({ indexed: 500, duplicates: 0, invalid: 0 });
  });

  it("replaying the whole log through a second consumer writes nothing twice", async () => {
    const { namespace, bus, pool } = await setup(300);
    const first = await start({ bus, pool });
    await until(async () => (await count(pool, namespace)).rows === 300, 20_000, "300 rows");
    await first.stop();
    const replay = await start({ bus, pool, consumer: `${namespace}-replay` });
    await until(() => replay.stats.duplicates === 300, 20_000, "300 duplicates seen");
    expect(replay.stats.indexed).toBe(0);
    expect(await count(pool, namespace)).toEqual({ rows: 300, distinct: 300, min: 1, max: 300 });
    // New records after the replay are indexed once.
    await publishSyntheticLog(bus, { records: 50, sessions: 50, agents: 5 }, 300);
    await until(async () => (await count(pool, namespace)).rows === 350, 20_000, "350 rows");
    expect(await count(pool, namespace)).toEqual({ rows: 350, distinct: 350, min: 1, max: 350 });
  });

  it("two indexers sharing the consumer index every record exactly once between them", async () => {
    const { namespace, bus, pool } = await setup(2000, 100);
    const bus2 = await Bus.open(await nats.connect(), { namespace });
    const a = await start({ bus, pool, batchSize: 50 });
    const b = await start({ bus: bus2, pool, batchSize: 50 });
    await until(async () => (await count(pool, namespace)).rows === 2000, 30_000, "2000 rows");
    await until(() => a.stats.indexed + b.stats.indexed === 2000, 10_000, "stats add up");
    expect(a.stats.indexed).toBeGreaterThan(0);
    expect(b.stats.indexed).toBeGreaterThan(0);
    // The second one took back what the first held in flight when it started (a dead peer's
    // records look the same): each of those may be written twice, and is stored once.
    expect(a.stats.duplicates + b.stats.duplicates).toBeLessThanOrEqual(b.stats.reclaimed);
    expect(await count(pool, namespace)).toEqual({ rows: 2000, distinct: 2000, min: 1, max: 2000 });
  });

  it("acks only after commit: an indexer killed while PostgreSQL holds its write loses nothing", async () => {
    const { namespace, bus, url, pool } = await setup(200);
    // Hold the table so the child's insert blocks before it can commit.
    const blocker = await pool.connect();
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE hookbus_records IN ACCESS EXCLUSIVE MODE");
    const child = startChild(
      ["--import", "tsx", "services/indexer.ts", "--ack-wait", "120000", "--log-level", "warn"],
      { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: namespace, HOOKBUS_INDEX_URL: url },
    );
    try {
      // The child has received every record and holds them unacked, blocked on the lock.
      await until(
        async () => {
          const info = await bus.jsm.consumers
            .info(bus.subjects.logStream, `${namespace}-indexer`)
            .catch(() => undefined);
          return info !== undefined && info.num_pending === 0 && info.num_ack_pending === 200;
        },
        20_000,
        "child holds all 200 records unacked",
      );
      child.child.kill("SIGKILL");
      await child.exited;
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    expect((await count(pool, namespace)).rows).toBe(0);
    expect((await indexLag(bus)).records).toBe(200);
    // Another indexer takes them back at once: the durable's ack wait (120 s) is longer than
    // the test waits.
    const next = await start({ bus, pool });
    await until(async () => (await count(pool, namespace)).rows === 200, 20_000, "200 rows");
    expect(await count(pool, namespace)).toEqual({ rows: 200, distinct: 200, min: 1, max: 200 });
    await until(async () => (await next.lag()).records === 0, 10_000, "no lag");
  });

  it("indexes a record it cannot decode as invalid, and keeps going", async () => {
    const { namespace, bus, pool } = await setup(10);
    await bus.js.publish(
      bus.subjects.audit("agent-x", "session-x", "before_tool_call", "allow"),
      new TextEncoder().encode("{not json"),
    );
    await publishSyntheticLog(bus, { records: 5, sessions: 50, agents: 5 }, 10);
    const indexer = await start({ bus, pool });
    await until(async () => (await count(pool, namespace)).rows === 16, 20_000, "16 rows");
    const bad = await pool.query(
      "SELECT seq::int, kind, agent_id, index_error FROM hookbus_records WHERE ns = $1 AND kind = 'invalid'",
      [namespace],
    );
    expect(bad.rows).toEqual([
      {
        seq: 11,
        kind: "invalid",
        agent_id: "agent-x",
        index_error: expect.stringMatching(/^HOOKBUS_BAD_MESSAGE/) as string,
      },
    ]);
    expect(indexer.stats.invalid).toBe(1);
  });

  it("two migrators at once take turns: the schema is applied once", async () => {
    const { pool } = await postgres.database({ migrate: false });
    const results = await Promise.all([migrateIndex(pool), migrateIndex(pool)]);
    expect(results.map((r) => r.applied).sort()).toEqual([[], [1, 2, 3, 4, 5]]);
    const versions = await pool.query("SELECT version FROM hookbus_migrations ORDER BY version");
    expect(versions.rows).toEqual([1, 2, 3, 4, 5].map((version) => ({ version })));
  });

  it("a run's records are found through an index on the run id (--run ID)", async () => {
    const { pool } = await postgres.database();
    const client = await pool.connect();
    try {
      await client.query("SET enable_seqscan = off"); // a few rows: make the planner show its choice
      const plan = await client.query<{ "QUERY PLAN": string }>(
        "EXPLAIN SELECT seq FROM hookbus_records r WHERE r.ns = $1 AND r.run_id = $2 ORDER BY r.seq DESC LIMIT 50",
        ["ns", "run-1"],
      );
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("hookbus_records_run");
    } finally {
      client.release();
    }
  });

  it("hookbus indexer migrate applies the schema once and then says it is up to date", async () => {
    const { url } = await postgres.database({ migrate: false });
    const lines: string[] = [];
    const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    expect(await main(["indexer", "migrate", "--index", url], out)).toBe(0);
    expect(await main(["indexer", "migrate", "--index", url], out)).toBe(0);
    expect(lines).toEqual([
      "applied migrations 1, 2, 3, 4, 5; index schema version 5",
      "index schema is up to date (version 5)",
    ]);
    const saved = process.env.HOOKBUS_INDEX_URL;
    delete process.env.HOOKBUS_INDEX_URL;
    const missing = await main(["indexer", "migrate"], out).finally(() => {
      if (saved !== undefined) process.env.HOOKBUS_INDEX_URL = saved;
    });
    expect(missing).toBe(1);
    expect(lines.at(-1)).toMatch(/^HOOKBUS_INVALID_ARGUMENT: no index: pass --index/);
  });

  it("hookbus indexer migrate creates a database that does not exist, or says how when it may not", async () => {
    const { url, pool } = await postgres.database({ migrate: false });
    const suffix = Math.random().toString(36).slice(2, 10);
    const name = `hookbus_new_${suffix}`;
    const role = `hookbus_nocreate_${suffix}`;
    const fresh = new URL(url);
    fresh.pathname = `/${name}`;
    const lines: string[] = [];
    const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
    try {
      await pool.query(`CREATE ROLE ${role} LOGIN NOCREATEDB`);
      const asRole = new URL(fresh);
      asRole.username = role;
      asRole.password = "";
      expect(await main(["indexer", "migrate", "--index", asRole.toString()], out)).toBe(1);
      expect(lines.at(-1)).toMatch(
        new RegExp(
          `^HOOKBUS_INDEX_UNAVAILABLE: database "${name}" does not exist and was not created: .*createdb .*-U ${role} "${name}"`,
        ),
      );
      expect(
        await main(
          ["indexer", "migrate", "--no-create-database", "--index", fresh.toString()],
          out,
        ),
      ).toBe(1);
      expect(lines.at(-1)).toMatch(
        new RegExp(`^HOOKBUS_INDEX_UNAVAILABLE: database "${name}" does not exist; create it`),
      );

      lines.length = 0;
      expect(await main(["indexer", "migrate", "--index", fresh.toString()], out)).toBe(0);
      expect(lines).toEqual([
        `created database "${name}"`,
        "applied migrations 1, 2, 3, 4, 5; index schema version 5",
      ]);
    } finally {
      await pool.query(`DROP DATABASE IF EXISTS ${name}`);
      await pool.query(`DROP ROLE IF EXISTS ${role}`);
    }
  });

  it("refuses to start on an index that was not migrated, naming the fix", async () => {
    const namespace = uniqueNamespace("idx");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 1, sessions: 1 });
    const { pool } = await postgres.database({ migrate: false });
    await expect(startIndexer({ bus, pool })).rejects.toMatchObject({
      code: "HOOKBUS_INDEX_SCHEMA",
      message: expect.stringContaining("hookbus indexer migrate") as string,
    });
  });
});
