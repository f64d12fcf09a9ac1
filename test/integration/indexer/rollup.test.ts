/**
 * The per-minute rollups (migrations/002) on a real PostgreSQL and a real NATS server: they equal
 * a recount from the rows after real indexers ran (two sharing the consumer, two on consumers of
 * their own racing on every record, a replay), a batch written again or holding a record twice
 * counts it once, `audit stats` and the per-minute counts are exact for ranges that cut minutes,
 * and migrating an index that already holds rows counts them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import {
  migrateIndex,
  startIndexer,
  type Indexer,
  type PgPool,
} from "../../../src/indexer/index.js";
import { projectRecord, type Projection } from "../../../src/indexer/projection.js";
import { countsPerMinute, indexStats } from "../../../src/audit/pg/query.js";
import { writeBatch } from "../../../src/indexer/writer.js";
import { publishSyntheticLog, syntheticRecord } from "../../support/synthetic-log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();
const running: Indexer[] = [];
afterAll(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

/** The rollup tables and the same counts recomputed from the rows, in one comparable shape. */
async function rollupsAndRecount(pool: PgPool, namespace: string) {
  const q = async (sql: string) =>
    (await pool.query<Record<string, unknown>>(sql, [namespace])).rows.map((r) =>
      JSON.stringify(r),
    );
  return {
    rollups: {
      records: await q(`SELECT minute, hook, outcome, records::int AS n FROM hookbus_minute_records
                        WHERE ns = $1 ORDER BY 1, 2, 3`),
      policies: await q(`SELECT minute, policy, status, bucket, outcomes::int AS n
                         FROM hookbus_minute_policies WHERE ns = $1 ORDER BY 1, 2, 3, 4`),
    },
    recount: {
      records:
        await q(`SELECT hookbus_minute(stored_at) AS minute, hook, outcome, count(*)::int AS n
                        FROM hookbus_records WHERE ns = $1 AND kind <> 'invalid'
                        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`),
      policies: await q(`SELECT hookbus_minute(r.stored_at) AS minute, p.policy, p.status,
                           hookbus_latency_bucket(p.latency_ms) AS bucket, count(*)::int AS n
                         FROM hookbus_policy_rows p JOIN hookbus_records r USING (ns, seq)
                         WHERE ns = $1 AND r.kind <> 'invalid'
                         GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4`),
    },
  };
}

async function expectRollupsExact(pool: PgPool, namespace: string, records: number) {
  const { rollups, recount } = await rollupsAndRecount(pool, namespace);
  expect(rollups).toEqual(recount);
  const total = await pool.query<{ n: number }>(
    "SELECT sum(records)::int AS n FROM hookbus_minute_records WHERE ns = $1",
    [namespace],
  );
  expect(total.rows[0]!.n).toBe(records);
}

const rowCount = async (pool: PgPool, namespace: string) =>
  Number(
    (
      await pool.query<{ n: string }>("SELECT count(*) AS n FROM hookbus_records WHERE ns = $1", [
        namespace,
      ])
    ).rows[0]!.n,
  );

async function indexed(records: number, sessions = 60) {
  const namespace = uniqueNamespace("rollup");
  const bus = await Bus.open(await nats.connect(), { namespace });
  await publishSyntheticLog(bus, { records, sessions, agents: 5 });
  const { pool } = await postgres.database();
  return { namespace, bus, pool };
}

async function start(options: Parameters<typeof startIndexer>[0]) {
  const indexer = await startIndexer(options);
  running.push(indexer);
  return indexer;
}

/** Synthetic record i as a projection stored at `storedAt` (the log is not involved). */
function projection(i: number, storedAt: Date): Projection {
  const { record, agentId, sessionKey, kind } = syntheticRecord(i, { sessions: 40, agents: 4 });
  return projectRecord(
    {
      seq: i + 1,
      subject: `t.audit.${agentId}.${sessionKey}.${record.hook}.${kind}`,
      storedAt,
      address: { agentId, sessionKey, hook: record.hook, kind },
    },
    record,
  );
}

describe("per-minute rollups", () => {
  it("two indexers sharing the consumer: the rollups equal a recount from the rows", async () => {
    const { namespace, bus, pool } = await indexed(3000);
    const bus2 = await Bus.open(await nats.connect(), { namespace });
    await start({ bus, pool, batchSize: 40 });
    await start({ bus: bus2, pool, batchSize: 40 });
    await until(async () => (await rowCount(pool, namespace)) === 3000, 30_000, "3000 rows");
    await expectRollupsExact(pool, namespace, 3000);
  });

  it("two indexers that both write every record, then a replay: each record is counted once", async () => {
    const { namespace, bus, pool } = await indexed(3000);
    const bus2 = await Bus.open(await nats.connect(), { namespace });
    // Consumers of their own: each indexer is handed every record, so they race on all of them.
    const a = await start({ bus, pool, batchSize: 50, consumer: `${namespace}-a` });
    const b = await start({ bus: bus2, pool, batchSize: 70, consumer: `${namespace}-b` });
    await until(
      () =>
        a.stats.indexed + a.stats.duplicates === 3000 &&
        b.stats.indexed + b.stats.duplicates === 3000,
      30_000,
      "both indexers saw every record",
    );
    expect(a.stats.indexed + b.stats.indexed).toBe(3000);
    await expectRollupsExact(pool, namespace, 3000);
    const replay = await start({ bus, pool, consumer: `${namespace}-replay` });
    await until(() => replay.stats.duplicates === 3000, 30_000, "replay saw every record");
    expect(replay.stats.indexed).toBe(0);
    await expectRollupsExact(pool, namespace, 3000);
  });

  it("a batch written again, or holding a record twice, counts each record once", async () => {
    const { pool } = await postgres.database();
    const namespace = uniqueNamespace("rollup");
    const at = new Date("2026-05-10T12:00:30.000Z");
    const batch = Array.from({ length: 50 }, (_, i) => projection(i, at));
    expect(await writeBatch(pool, namespace, batch)).toBe(50);
    // Redelivered: nothing new, nothing counted.
    expect(await writeBatch(pool, namespace, batch)).toBe(0);
    // Records 50-59, each twice in one batch (redelivered while its first delivery waited),
    // with records already indexed.
    const twice = Array.from({ length: 10 }, (_, i) => projection(50 + i, at));
    expect(await writeBatch(pool, namespace, [...batch.slice(0, 5), ...twice, ...twice])).toBe(10);
    await expectRollupsExact(pool, namespace, 60);
  });

  it("stats and per-minute counts are exact for ranges that cut minutes, with and without an agent", async () => {
    const { pool } = await postgres.database();
    const namespace = uniqueNamespace("rollup");
    // 600 records, one every 7.3 s from 12:00:00.250: about eight a minute over 73 minutes.
    const base = Date.parse("2026-05-10T12:00:00.250Z");
    const all = Array.from({ length: 600 }, (_, i) => projection(i, new Date(base + i * 7300)));
    for (let i = 0; i < all.length; i += 64)
      await writeBatch(pool, namespace, all.slice(i, i + 64));
    await expectRollupsExact(pool, namespace, 600);

    const t = (s: string) => new Date(`2026-05-10T${s}Z`);
    const ranges: { since?: Date; until?: Date; agentId?: string }[] = [
      {},
      { since: t("12:03:17.5") },
      { until: t("12:40:02.9") },
      { since: t("12:03:17.5"), until: t("12:40:02.9") },
      { since: t("12:05:00"), until: t("12:30:00") }, // whole minutes, both bounds inclusive
      { since: t("12:05:00.001"), until: t("12:29:59.999") },
      { since: t("12:10:05"), until: t("12:10:50") }, // inside one minute
      { since: t("12:10:40"), until: t("12:11:20") }, // across one boundary, no whole minute
      { since: new Date(base + 7300 * 10), until: new Date(base + 7300 * 20) }, // on records
      { since: t("12:03:17.5"), until: t("12:40:02.9"), agentId: "agent-2" },
      { since: t("14:00:00") }, // after the last record
    ];
    for (const range of ranges) {
      const where = [
        "r.ns = $1",
        "r.kind <> 'invalid'",
        "($2::timestamptz IS NULL OR r.stored_at >= $2)",
        "($3::timestamptz IS NULL OR r.stored_at <= $3)",
        "($4::text IS NULL OR r.agent_id = $4)",
      ].join(" AND ");
      const params = [namespace, range.since ?? null, range.until ?? null, range.agentId ?? null];
      const records = await pool.query<{ hook: string; outcome: string; count: number }>(
        `SELECT hook, outcome, count(*)::int AS count FROM hookbus_records r WHERE ${where}
         GROUP BY 1, 2 ORDER BY 1, 2`,
        params,
      );
      const policies = await pool.query<{
        policy: string;
        status: string;
        count: number;
        p50: number;
        p99: number;
      }>(
        `SELECT p.policy, p.status, count(*)::int AS count,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY p.latency_ms) AS p50,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY p.latency_ms) AS p99
         FROM hookbus_records r JOIN hookbus_policy_rows p USING (ns, seq) WHERE ${where}
         GROUP BY 1, 2 ORDER BY 1, 2`,
        params,
      );
      const label = JSON.stringify(range);
      const stats = await indexStats(pool, namespace, range);
      expect(stats.byHookOutcome, label).toEqual(records.rows);
      expect(stats.total, label).toBe(records.rows.reduce((s, r) => s + r.count, 0));
      expect(
        stats.byPolicyStatus.map(({ policy, status, count }) => ({ policy, status, count })),
        label,
      ).toEqual(policies.rows.map(({ policy, status, count }) => ({ policy, status, count })));
      // Percentiles from 10 %-wide buckets: the same rank as percentile_disc, within 5 %.
      stats.byPolicyStatus.forEach((row, i) => {
        const exact = policies.rows[i]!;
        expect(
          Math.abs(row.p50Ms! / exact.p50 - 1),
          `${label} ${row.policy} p50`,
        ).toBeLessThanOrEqual(0.05);
        expect(
          Math.abs(row.p99Ms! / exact.p99 - 1),
          `${label} ${row.policy} p99`,
        ).toBeLessThanOrEqual(0.05);
      });
      if (range.since !== undefined && range.until !== undefined) {
        const perMinute = await pool.query<{ minute: Date; outcome: string; count: number }>(
          `SELECT hookbus_minute(stored_at) AS minute, outcome, count(*)::int AS count
           FROM hookbus_records r WHERE ${where} GROUP BY 1, 2 ORDER BY 1, 2`,
          params,
        );
        expect(
          await countsPerMinute(pool, namespace, {
            since: range.since,
            until: range.until,
            agentId: range.agentId,
          }),
          label,
        ).toEqual(perMinute.rows);
      }
    }
  });

  it("migrating an index that already holds rows counts them", async () => {
    const { pool } = await postgres.database({ upTo: 1 });
    const namespace = uniqueNamespace("rollup");
    // Rows written by a version-1 indexer: the records and their policy rows, no rollups.
    const base = Date.parse("2026-05-10T12:00:00.000Z");
    const rows = Array.from({ length: 200 }, (_, i) => projection(i, new Date(base + i * 1000)));
    await pool.query(
      `INSERT INTO hookbus_records (ns, seq, subject, stored_at, kind, outcome, agent_id,
         session_key, hook) SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::timestamptz[],
         $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])`,
      [
        namespace,
        ...(
          [
            "seq",
            "subject",
            "storedAt",
            "kind",
            "outcome",
            "agentId",
            "sessionKey",
            "hook",
          ] as const
        ).map((k) => rows.map((p) => p.record[k])),
      ],
    );
    const policies = rows.flatMap((p) => p.policies);
    await pool.query(
      `INSERT INTO hookbus_policy_outcomes (ns, seq, policy, status, latency_ms)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::float8[])`,
      [
        namespace,
        policies.map((p) => p.seq),
        policies.map((p) => p.policy),
        policies.map((p) => p.status),
        policies.map((p) => p.latencyMs),
      ],
    );
    expect((await migrateIndex(pool)).applied).toEqual([2, 3, 4, 5]);
    await expectRollupsExact(pool, namespace, 200);
    // The indexer goes on from there: new records are added to the same minutes.
    const more = Array.from({ length: 100 }, (_, i) =>
      projection(200 + i, new Date(base + i * 1500)),
    );
    expect(await writeBatch(pool, namespace, more)).toBe(100);
    await expectRollupsExact(pool, namespace, 300);
  });
});
