/**
 * An indexer process killed (SIGKILL) at any moment, on a real NATS server and a real PostgreSQL
 * (issue 32.3): one killed mid-load while it holds records unacked, the next killed mid-catch-up,
 * the third catches up; and one killed holding every record of the log unacked. The records the
 * dead ones held are taken back at once (the durable's ack wait is 120 s, longer than the test
 * waits), written in full batches (not one per redelivery: with nothing new in the log, every
 * redelivery once read as "caught up"), and every log record ends up in PostgreSQL exactly once:
 * rows, policy rows and per-minute counts, nothing extra. The catch-up rate is printed, not
 * asserted (the machine is shared).
 */
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import type { PgPool } from "../../../src/indexer/index.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import { startChild, type Child } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

const TOTAL = 30_000;
const BATCH = 1000;

function indexer(namespace: string, indexUrl: string): Child {
  return startChild(
    ["--import", "tsx", "services/indexer.ts", "--ack-wait", "120000", "--batch", String(BATCH)],
    {
      NATS_URL: nats.url(),
      HOOKBUS_NAMESPACE: namespace,
      HOOKBUS_INDEX_URL: indexUrl,
      LOG_LEVEL: "info",
    },
  );
}

/** The child's NDJSON log line whose msg is `msg`, parsed (undefined until it is written). */
function logLine(child: Child, msg: string): Record<string, unknown> | undefined {
  for (const line of child.output().split("\n")) {
    if (!line.includes(`"msg":"${msg}"`)) continue;
    return JSON.parse(line) as Record<string, unknown>;
  }
  return undefined;
}

async function rows(pool: PgPool, namespace: string): Promise<number> {
  const r = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM hookbus_records WHERE ns = $1",
    [namespace],
  );
  return r.rows[0]!.n;
}

async function unacked(bus: Bus, namespace: string): Promise<number> {
  const info = await bus.jsm.consumers
    .info(bus.subjects.logStream, `${namespace}-indexer`)
    .catch(() => undefined);
  return info?.num_ack_pending ?? 0;
}

/** Kills the child with SIGKILL once `rows >= atRows` while it holds records unacked. */
async function killWhenHolding(
  child: Child,
  ctx: { bus: Bus; pool: PgPool; namespace: string },
  atRows: number,
): Promise<void> {
  await until(
    async () =>
      (await rows(ctx.pool, ctx.namespace)) >= atRows &&
      (await unacked(ctx.bus, ctx.namespace)) > 0,
    60_000,
    `${atRows} rows indexed and records held unacked`,
  );
  child.child.kill("SIGKILL");
  await child.exited;
}

/** Every log record once: rows, distinct sequences, policy rows and the per-minute counts. */
async function expectExactlyOnce(pool: PgPool, namespace: string, bus: Bus, total: number) {
  const log = await bus.jsm.streams.info(bus.subjects.logStream);
  expect(log.state.messages).toBe(total);
  const r = await pool.query<Record<string, number>>(
    `SELECT count(*)::int AS rows, count(DISTINCT seq)::int AS distinct, min(seq)::int AS min,
            max(seq)::int AS max,
            (SELECT count(*)::int FROM hookbus_policy_rows WHERE ns = $1) AS policy_rows,
            (SELECT sum(records)::int FROM hookbus_minute_records WHERE ns = $1) AS counted,
            (SELECT sum(outcomes)::int FROM hookbus_minute_policies WHERE ns = $1) AS counted_policies
     FROM hookbus_records WHERE ns = $1`,
    [namespace],
  );
  const got = r.rows[0]!;
  expect(got).toMatchObject({ rows: total, distinct: total, min: 1, max: log.state.last_seq });
  expect(got.counted).toBe(total);
  expect(got.counted_policies).toBe(got.policy_rows);
  expect(got.policy_rows).toBeGreaterThan(total);
}

/**
 * Starts an indexer and waits until it indexed all `total` records; prints the rate; checks
 * exactly-once; stops it (SIGTERM) and returns its final counts (its "indexer stopped" line).
 */
async function catchUp(
  ctx: { bus: Bus; pool: PgPool; namespace: string; url: string },
  total: number,
  label: string,
): Promise<{ behind: number; indexed: number; duplicates: number; batches: number }> {
  const { bus, pool, namespace, url } = ctx;
  const behind = total - (await rows(pool, namespace));
  const heldUnacked = await unacked(bus, namespace);
  expect(heldUnacked).toBeGreaterThan(0);
  const child = indexer(namespace, url);
  try {
    const started = await until(() => logLine(child, "indexer started"), 60_000, "started");
    // Well before the 120 s ack wait: the unacked records were taken back, not waited out.
    await until(async () => (await rows(pool, namespace)) === total, 60_000, "all indexed");
    const seconds = (Date.now() - (started.time as number)) / 1000;
    await expectExactlyOnce(pool, namespace, bus, total);
    child.child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    const stats = logLine(child, "indexer stopped") as Record<string, number>;
    console.log(
      `indexer restart (${label}): ${behind} records behind, ${heldUnacked} of them held unacked by the killed one; caught up in ${seconds.toFixed(2)} s = ${Math.round(behind / seconds)} records/s; ${stats.batches} batches, ${stats.duplicates} duplicates (shared machine)`,
    );
    return {
      behind,
      indexed: stats.indexed!,
      duplicates: stats.duplicates!,
      batches: stats.batches!,
    };
  } finally {
    child.child.kill("SIGKILL");
  }
}

describe("an indexer killed at any moment", () => {
  it("mid-load, then mid-catch-up: the next takes back what they held at once, in full batches, and indexes every record once", async () => {
    const namespace = uniqueNamespace("idxkill");
    const bus = await Bus.open(await nats.connect(), { namespace });
    await publishSyntheticLog(bus, { records: 1, sessions: 200, agents: 10 });
    const { url, pool } = await postgres.database();
    const ctx = { bus, pool, namespace, url };

    // Killed mid-load, holding records unacked.
    const load = publishSyntheticLog(bus, { records: TOTAL - 1, sessions: 200, agents: 10 }, 1);
    await killWhenHolding(indexer(namespace, url), ctx, 3000);
    await load;
    // Killed mid-catch-up (its own reclaim and redeliveries under way).
    await killWhenHolding(indexer(namespace, url), ctx, 8000);

    const caught = await catchUp(ctx, TOTAL, "killed mid-load, then mid-catch-up");
    expect(caught.behind).toBeGreaterThanOrEqual(10_000);
    expect(caught.indexed).toBe(caught.behind);
    // Full batches: one batch per redelivery would be thousands.
    expect(caught.batches).toBeLessThanOrEqual(2 * Math.ceil(caught.behind / BATCH) + 10);
  }, 240_000);

  it("holding every record of the log: the next writes them as full batches, not one per redelivery", async () => {
    const namespace = uniqueNamespace("idxheld");
    const bus = await Bus.open(await nats.connect(), { namespace });
    const { url, pool } = await postgres.database();
    const ctx = { bus, pool, namespace, url };
    const held = 2500;
    // PostgreSQL holds the writes: the indexer receives every record and can ack none.
    const blocker = await pool.connect();
    await blocker.query("BEGIN");
    await blocker.query("LOCK TABLE hookbus_records IN ACCESS EXCLUSIVE MODE");
    const child = indexer(namespace, url);
    try {
      await publishSyntheticLog(bus, { records: held, sessions: 200, agents: 10 });
      await until(
        async () => {
          const info = await bus.jsm.consumers
            .info(bus.subjects.logStream, `${namespace}-indexer`)
            .catch(() => undefined);
          return info?.num_pending === 0 && info.num_ack_pending === held;
        },
        60_000,
        `the indexer holds all ${held} records unacked`,
      );
      child.child.kill("SIGKILL");
      await child.exited;
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    // Nothing new in the log: every record the next one reads is a redelivery.
    const caught = await catchUp(ctx, held, "killed holding the whole log");
    expect(caught.indexed).toBe(held);
    expect(caught.batches).toBeLessThanOrEqual(Math.ceil(held / BATCH) + 10);
  }, 240_000);
});
