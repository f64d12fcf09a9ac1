/**
 * `npm run bench:audit`: the audit index at scale. Fills a log with BENCH_AUDIT_RECORDS records
 * (default 1,000,000) across BENCH_AUDIT_SESSIONS sessions (default 20,000), indexes them into
 * PostgreSQL with `hookbus indexer`'s code, then measures: indexer records/s; p50/p99 of a
 * session timeline, of an agent+outcome query over the last hour, of a policy+status query and of
 * stats over a day; and the decision path's p99 while audit queries run in a loop (in another process) as a ratio to its
 * p99 without them (interleaved rounds, on the same server and log). The LAST line is:
 *   audit: records=… index_rps=… session_p99_ms=… agent_outcome_p99_ms=… policy_status_p99_ms=…
 *          stats_day_p99_ms=… decision_p99_ratio_under_audit=…
 * BENCH_AUDIT_WRITERS sets the indexer's concurrent batch writers (default 2).
 * BENCH_AUDIT_INDEX_ONLY=1 stops after indexing (for A/B runs of the indexer alone); its last line
 * is then `audit: records=… index_rps=… node_us_per_record=… pg_us_per_record=…`.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { HookbusClient } from "../src/agent/index.js";
import { Bus } from "../src/bus/bus.js";
import { Subjects } from "../src/bus/subjects.js";
import { connectionOptions } from "../src/bus/connect.js";
import { startCoordinator } from "../src/coordinator/index.js";
import {
  indexStats,
  migrateIndex,
  openIndexPool,
  queryIndex,
  type PgPool,
  queryIndexAll,
  startIndexer,
} from "../src/indexer/index.js";
import { RegistryStore } from "../src/registry/store.js";
import { findNatsServer } from "../src/testing/nats.js";
import { createTestDatabase, findPostgres } from "../test/support/postgres-server.js";
import {
  publishSyntheticLog,
  syntheticAgent,
  syntheticSession,
} from "../test/support/synthetic-log.js";
import { runPolicy } from "../src/worker/index.js";
import { definePolicy } from "../src/policy/policy.js";

const RECORDS = Number(process.env.BENCH_AUDIT_RECORDS ?? 1_000_000);
const SESSIONS = Number(process.env.BENCH_AUDIT_SESSIONS ?? 20_000);
const QUERY_RUNS = Number(process.env.BENCH_AUDIT_QUERIES ?? 200);
const ROUNDS = Number(process.env.BENCH_AUDIT_ROUNDS ?? 3);
const CALLS_PER_ROUND = Number(process.env.BENCH_AUDIT_CALLS ?? 400);
/** The indexer's --writers (default: the indexer's own default, 2). */
const WRITERS =
  process.env.BENCH_AUDIT_WRITERS === undefined
    ? undefined
    : Number(process.env.BENCH_AUDIT_WRITERS);
const INDEX_ONLY = process.env.BENCH_AUDIT_INDEX_ONLY === "1";
const NAMESPACE = "bench-audit";

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function timed(runs: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

const fmt = (ms: number) => ms.toFixed(1);
/** The machine's 1-minute load average, printed with each figure (other work shares the cores). */
const machineLoad = () => `load ${loadavg()[0]!.toFixed(1)}`;

/**
 * CPU time (ms) of the PostgreSQL backends serving database `name`, from /proc (Linux; undefined
 * elsewhere). A backend starts at 0, so one that connects meanwhile is counted whole; the
 * server's background processes (WAL writer, checkpointer, autovacuum) are not counted.
 */
async function backendCpuMs(pool: PgPool, name: string): Promise<number | undefined> {
  const r = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1",
    [name],
  );
  let ms = 0;
  for (const { pid } of r.rows) {
    try {
      // Fields after the command's ")": state is 1st, utime 12th, stime 13th (clock ticks, 100/s).
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      ms += (Number(fields[11]) + Number(fields[12])) * 10;
    } catch {
      return undefined;
    }
  }
  return ms;
}

async function main(): Promise<void> {
  const nats = await findNatsServer({ own: true });
  const pg = await findPostgres();
  const db = await createTestDatabase(pg, "hookbus_bench");
  const pool = openIndexPool(db.url, { max: 4 });
  const conns: NatsConnection[] = [];
  const open = async (name: string) => {
    const nc = await connect({ ...connectionOptions({ server: nats.url }), name });
    conns.push(nc);
    return nc;
  };
  let load: ReturnType<typeof spawn> | undefined;
  try {
    await migrateIndex(pool);
    const bus = await Bus.open(await open("bench-fill"), { namespace: NAMESPACE });
    console.log(`nats: ${nats.source} ${nats.url}; postgres: ${pg.source}, database ${db.name}`);

    let t0 = performance.now();
    await publishSyntheticLog(bus, {
      records: RECORDS,
      sessions: SESSIONS,
      onProgress: (n) => console.log(`  filled ${n}`),
      progressEvery: 100_000,
    });
    const info = await bus.jsm.streams.info(bus.subjects.logStream);
    console.log(
      `log: ${info.state.messages} records (${(info.state.bytes / 1e6).toFixed(0)} MB, ${SESSIONS} sessions) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );

    const pgCpu0 = await backendCpuMs(pool, db.name);
    const cpu0 = process.cpuUsage();
    t0 = performance.now();
    const indexer = await startIndexer({
      bus: await Bus.open(await open("bench-indexer"), { namespace: NAMESPACE }),
      pool: openIndexPool(db.url, { max: (WRITERS ?? 2) + 1 }),
      batchSize: 2000,
      ...(WRITERS === undefined ? {} : { writers: WRITERS }),
    });
    let last = 0;
    while (indexer.stats.indexed < RECORDS) {
      await new Promise((r) => setTimeout(r, 500));
      if (indexer.stats.indexed - last >= 100_000) {
        last = indexer.stats.indexed;
        console.log(`  indexed ${last}`);
      }
    }
    const indexSeconds = (performance.now() - t0) / 1000;
    const indexRps = Math.round(RECORDS / indexSeconds);
    const cpu = process.cpuUsage(cpu0);
    const pgCpu1 = await backendCpuMs(pool, db.name);
    console.log(
      `indexer: ${RECORDS} records in ${indexSeconds.toFixed(1)} s = ${indexRps} records/s (batches of 2000, ${WRITERS ?? 2} writers; ${machineLoad()})`,
    );
    // CPU per record is steadier than records/s on a shared machine: what the indexer would
    // reach with the cores to itself is about (cores × 10^6) / (node + postgres µs per record).
    const perRecord = (ms: number) => ((ms * 1000) / RECORDS).toFixed(1);
    const nodeUs = perRecord((cpu.user + cpu.system) / 1000);
    const pgUs = pgCpu0 === undefined || pgCpu1 === undefined ? "n/a" : perRecord(pgCpu1 - pgCpu0);
    console.log(`indexer cpu: node ${nodeUs} µs/record, postgres backends ${pgUs} µs/record`);
    if (INDEX_ONLY) {
      await indexer.stop();
      console.log(
        `audit: records=${RECORDS} index_rps=${indexRps} node_us_per_record=${nodeUs} pg_us_per_record=${pgUs}`,
      );
      return;
    }
    await pool.query("ANALYZE");

    const random = () => Math.floor(Math.random() * SESSIONS);
    const session = await timed(QUERY_RUNS, async () => {
      let n = 0;
      for await (const _ of queryIndexAll(pool, NAMESPACE, {
        sessionKey: syntheticSession(random()),
      }))
        n++;
      if (n === 0) throw new Error("empty session");
    });
    const agentOutcome = await timed(QUERY_RUNS, (i) =>
      queryIndex(pool, NAMESPACE, {
        agentId: syntheticAgent(i % 20),
        outcome: "block",
        since: new Date(Date.now() - 3_600_000),
        limit: 100,
      }),
    );
    // A policy and a rare status (path-guard times out in 1 decision of 97), newest first: what
    // "when did this policy time out?" asks of the policy rows.
    const policyStatus = await timed(QUERY_RUNS, () =>
      queryIndex(pool, NAMESPACE, {
        policy: "path-guard",
        status: "timeout",
        newestFirst: true,
        limit: 100,
      }),
    );
    const stats = await timed(Math.max(3, Math.floor(QUERY_RUNS / 20)), () =>
      indexStats(pool, NAMESPACE, { since: new Date(Date.now() - 86_400_000) }),
    );
    console.log(
      `session timeline (${RECORDS / SESSIONS} records): p50 ${fmt(percentile(session, 50))} ms, p99 ${fmt(percentile(session, 99))} ms`,
    );
    console.log(
      `agent+outcome, last hour, limit 100: p50 ${fmt(percentile(agentOutcome, 50))} ms, p99 ${fmt(percentile(agentOutcome, 99))} ms`,
    );
    console.log(
      `policy+status (timeout), newest first, limit 100: p50 ${fmt(percentile(policyStatus, 50))} ms, p99 ${fmt(percentile(policyStatus, 99))} ms`,
    );
    console.log(
      `stats over a day: p50 ${fmt(percentile(stats, 50))} ms, p99 ${fmt(percentile(stats, 99))} ms (${machineLoad()})`,
    );

    // The decision path on the same server, writing to the same log, indexer running.
    const coordNc = await open("bench-coordinator");
    const coordinator = await startCoordinator({ nc: coordNc, namespace: NAMESPACE });
    const policy = definePolicy({
      name: "no-shell",
      version: "1",
      hooks: {
        before_tool_call: (e) =>
          e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
      },
    });
    const runner = await runPolicy([policy], {
      nc: await open("bench-worker"),
      namespace: NAMESPACE,
    });
    const registry = await RegistryStore.open(coordNc, new Subjects(NAMESPACE));
    await registry.apply({
      policies: [{ name: "no-shell", hooks: ["before_tool_call"], priority: 10 }],
    });
    const client = await HookbusClient.connect({
      nc: await open("bench-agent"),
      namespace: NAMESPACE,
    });
    const until = Date.now() + 5000;
    while (
      (client.isFastPath("before_tool_call") || coordinator.registry().revision === 0) &&
      Date.now() < until
    )
      await new Promise((r) => setTimeout(r, 20));
    const ctx = { agentId: "bench-agent", sessionKey: "live", runId: "run-1" };
    const call = (i: number) =>
      client.beforeToolCall(
        { ...ctx, toolCallId: `c${i}` },
        { toolName: "read_file", toolCallId: `c${i}`, params: { path: "/srv/x" } },
      );
    await timed(200, call); // warm up

    const startLoad = async () => {
      const child = spawn(process.execPath, ["--import", "tsx", "bench/audit-load.ts"], {
        env: {
          ...process.env,
          BENCH_INDEX_URL: db.url,
          BENCH_NAMESPACE: NAMESPACE,
          BENCH_SESSIONS: String(SESSIONS),
        },
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => {
          if (d.toString().includes("running")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`audit load exited ${code}`)));
      });
      return child;
    };
    const quiet: number[] = [];
    const loaded: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      quiet.push(...(await timed(CALLS_PER_ROUND, call)));
      load = await startLoad();
      loaded.push(...(await timed(CALLS_PER_ROUND, call)));
      load.kill("SIGKILL");
      load = undefined;
    }
    const quietP99 = percentile(quiet, 99);
    const loadedP99 = percentile(loaded, 99);
    console.log(
      `decision path: p99 ${fmt(quietP99)} ms without audit load, ${fmt(loadedP99)} ms with it (p50 ${fmt(percentile(quiet, 50))} / ${fmt(percentile(loaded, 50))} ms; ${machineLoad()})`,
    );
    await client.close();
    await runner.stop();
    await coordinator.stop();
    await indexer.stop();
    console.log(
      `audit: records=${RECORDS} index_rps=${indexRps} session_p99_ms=${fmt(percentile(session, 99))} ` +
        `agent_outcome_p99_ms=${fmt(percentile(agentOutcome, 99))} policy_status_p99_ms=${fmt(percentile(policyStatus, 99))} stats_day_p99_ms=${fmt(percentile(stats, 99))} ` +
        `decision_p99_ratio_under_audit=${(loadedP99 / quietP99).toFixed(2)}`,
    );
  } finally {
    load?.kill("SIGKILL");
    for (const nc of conns) await nc.drain().catch(() => {});
    await pool.end().catch(() => {});
    await db.drop().catch(() => {});
    await pg.stop();
    await nats.stop();
  }
}

await main();
