/**
 * `npx tsx bench/index-plans.ts`: the audit queries' plans and times on a large index, without
 * NATS. Writes BENCH_INDEX_PLANS_RECORDS synthetic records (default 1,000,000, across
 * BENCH_INDEX_PLANS_SESSIONS sessions, default 20,000, the last one stored now) the way the
 * indexer writes new ones, ANALYZEs, then for each query of the audit API (session timeline,
 * agent and outcome, the policy and status filters, an agent's stats counted from rows) prints
 * its SQL's `EXPLAIN (ANALYZE, BUFFERS)` and its p50/p99 over BENCH_INDEX_PLANS_RUNS runs
 * (default 100). The plans show which index serves each question; the times are the machine's.
 */
import { loadavg } from "node:os";
import {
  indexStats,
  migrateIndex,
  openIndexPool,
  queryIndex,
  type IndexFilter,
  type PgPool,
} from "../src/indexer/index.js";
import { syntheticAgent, syntheticSession } from "../test/support/synthetic-log.js";
import { createTestDatabase, findPostgres } from "../test/support/postgres-server.js";
import { writeSyntheticRange, type SyntheticIndex } from "./support/synthetic-index.js";

const RECORDS = Number(process.env.BENCH_INDEX_PLANS_RECORDS ?? 1_000_000);
const SESSIONS = Number(process.env.BENCH_INDEX_PLANS_SESSIONS ?? 20_000);
const RUNS = Number(process.env.BENCH_INDEX_PLANS_RUNS ?? 100);
const INDEX: SyntheticIndex = {
  namespace: "bench-plans",
  sessions: SESSIONS,
  startMs: Date.now() - RECORDS,
};

/** The last statement a pool was asked to run (the query's main SELECT comes last). */
interface Recorded {
  text: string;
  values: unknown[];
}

/** The pool, noting each statement it runs in `last`. */
function recording(pool: PgPool, last: { statement?: Recorded }): PgPool {
  return new Proxy(pool, {
    get(target, key, receiver) {
      if (key !== "query") return Reflect.get(target, key, receiver) as unknown;
      return (text: string, values: unknown[] = []) => {
        last.statement = { text, values };
        return target.query(text, values);
      };
    },
  });
}

const QUERIES: [string, (pool: PgPool, i: number) => Promise<unknown>][] = [
  [
    "session timeline (one page)",
    (pool, i) => queryIndex(pool, INDEX.namespace, { sessionKey: syntheticSession(i % SESSIONS) }),
  ],
  [
    "agent + outcome block, last hour, limit 100",
    (pool, i) =>
      queryIndex(pool, INDEX.namespace, {
        agentId: syntheticAgent(i % 20),
        outcome: "block",
        since: new Date(Date.now() - 3_600_000),
        limit: 100,
      }),
  ],
  ...(
    [
      { policy: "path-guard", status: "timeout" },
      { policy: "path-guard", status: "ok" },
      { policy: "path-guard" },
      { status: "timeout" },
      { status: "ok" },
      { policy: "nobody", status: "ok" },
      { policy: "nobody", status: "timeout" },
    ] as IndexFilter[]
  ).map((filter): [string, (pool: PgPool) => Promise<unknown>] => [
    `${JSON.stringify(filter)}, newest first, limit 100`,
    (pool) => queryIndex(pool, INDEX.namespace, { ...filter, newestFirst: true, limit: 100 }),
  ]),
  [
    "an agent's stats over the last minute written (from rows)",
    (pool, i) =>
      indexStats(pool, INDEX.namespace, {
        agentId: syntheticAgent(i % 20),
        since: new Date(INDEX.startMs + RECORDS - 60_000),
      }),
  ],
];

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function explain(pool: PgPool, statement: Recorded): Promise<string> {
  const r = await pool.query<{ "QUERY PLAN": string }>(
    `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
    statement.values,
  );
  return r.rows.map((row) => `    ${row["QUERY PLAN"]}`).join("\n");
}

async function main(): Promise<void> {
  const server = await findPostgres();
  const db = await createTestDatabase(server, "hookbus_plans");
  const pool = openIndexPool(db.url, { max: 2 });
  try {
    await migrateIndex(pool);
    const t0 = performance.now();
    await writeSyntheticRange(pool, INDEX, 0, RECORDS);
    console.log(
      `wrote ${RECORDS} records in ${((performance.now() - t0) / 1000).toFixed(1)} s (load ${loadavg()[0]!.toFixed(1)})`,
    );
    await pool.query("VACUUM ANALYZE");
    const last: { statement?: Recorded } = {};
    const noted = recording(pool, last);
    for (const [name, run] of QUERIES) {
      await run(noted, 0);
      const plan = await explain(pool, last.statement!);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        await run(pool, i);
        times.push(performance.now() - started);
      }
      console.log(
        `${name}: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms (load ${loadavg()[0]!.toFixed(1)})\n${plan}`,
      );
    }
  } finally {
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();
