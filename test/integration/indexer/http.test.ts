/**
 * `hookbus indexer --http` on a real NATS server and a real PostgreSQL: /metrics reports the lag
 * (records and seconds) falling to 0 as the log is indexed, rising while PostgreSQL holds the
 * indexer's write, and the counts; /readyz fails with the reason while writes fail and recovers;
 * /healthz answers throughout; SIGTERM exits 0.
 */
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { indexLag } from "../../../src/indexer/index.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

async function get(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.text() };
}

/** A metric's value (no labels but the default ones), or undefined when absent. */
function metric(body: string, name: string): number | undefined {
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(body);
  return line === null ? undefined : Number(line[1]);
}

describe("hookbus indexer --http", () => {
  it("serves lag and counts on /metrics, readiness on /readyz, liveness on /healthz", async () => {
    const namespace = uniqueNamespace("idxhttp");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 200, sessions: 20, agents: 2 });
    const { url: indexUrl, pool } = await postgres.database();
    const child = startChild(
      ["--import", "tsx", "services/indexer.ts", "--http", "127.0.0.1:0", "--batch", "50"],
      {
        NATS_URL: nats.url(),
        HOOKBUS_NAMESPACE: namespace,
        HOOKBUS_INDEX_URL: indexUrl,
        LOG_LEVEL: "info",
      },
    );
    const blocker = await pool.connect();
    let locked = false;
    try {
      const url = await until(
        () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(child.output())?.[1],
        30_000,
        "the endpoints' url in the log",
      );
      expect(await get(`${url}/healthz`)).toMatchObject({ status: 200 });
      await until(async () => (await get(`${url}/readyz`)).status === 200, 30_000, "/readyz 200");

      // Caught up: lag 0, every record counted.
      await until(
        async () => {
          const body = (await get(`${url}/metrics`)).body;
          return (
            metric(body, "hookbus_indexer_lag_records") === 0 &&
            metric(body, "hookbus_indexer_records_indexed_total") === 200
          );
        },
        30_000,
        "lag 0 and 200 records indexed",
      );
      const caughtUp = (await get(`${url}/metrics`)).body;
      expect(metric(caughtUp, "hookbus_indexer_lag_seconds")).toBe(0);
      expect(metric(caughtUp, "hookbus_indexer_records_invalid_total")).toBe(0);
      expect(caughtUp).toContain("# TYPE hookbus_indexer_lag_records gauge");
      expect(caughtUp).toContain('role="indexer"');

      // PostgreSQL holds the write: the new records stay unindexed, and the lag says so.
      await blocker.query("BEGIN");
      await blocker.query("LOCK TABLE hookbus_records IN ACCESS EXCLUSIVE MODE");
      locked = true;
      await publishSyntheticLog(bus, { records: 30, sessions: 20, agents: 2 }, 200);
      await until(async () => (await indexLag(bus)).records === 30, 30_000, "30 held unindexed");
      // One scrape, read once: its age belongs to its count (prom-client collects gauges in
      // parallel; the age once came from the scrape before, here 0 while 30 were waiting).
      const behind = (await get(`${url}/metrics`)).body;
      expect(metric(behind, "hookbus_indexer_lag_records")).toBe(30);
      expect(metric(behind, "hookbus_indexer_lag_seconds")).toBeGreaterThan(0);
      expect(metric(behind, "hookbus_indexer_lag_read_failed")).toBe(0);

      // The write fails (its connection is cut): not ready, with the reason. Cut until it has
      // failed: the write may not have reached the lock yet (its backend still idle) when first
      // looked for, and an idle connection is not the write.
      await until(
        async () => {
          await pool.query(
            // Only this test's database: other tests on the same server keep their connections.
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'hookbus-indexer' AND state <> 'idle'",
          );
          const ready = await get(`${url}/readyz`);
          return ready.status === 503 && ready.body.includes("index writes are failing");
        },
        30_000,
        "/readyz 503 while writes fail",
      );
      expect((await get(`${url}/healthz`)).status).toBe(200);

      // PostgreSQL lets go: the retry commits, ready again, lag back to 0.
      await blocker.query("ROLLBACK");
      locked = false;
      await until(async () => (await get(`${url}/readyz`)).status === 200, 30_000, "ready again");
      await until(
        async () => {
          const body = (await get(`${url}/metrics`)).body;
          return (
            metric(body, "hookbus_indexer_lag_records") === 0 &&
            metric(body, "hookbus_indexer_records_indexed_total") === 230
          );
        },
        30_000,
        "lag 0 and 230 records indexed",
      );
      const rows = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM hookbus_records WHERE ns = $1",
        [namespace],
      );
      expect(rows.rows[0]!.n).toBe(230);
    } finally {
      if (locked) await blocker.query("ROLLBACK").catch(() => {});
      blocker.release();
      child.child.kill("SIGTERM");
      const code = await child.exited;
      expect({ code, log: code === 0 ? "" : child.output() + child.errors() }).toEqual({
        code: 0,
        log: "",
      });
    }
  }, 180_000);
});
