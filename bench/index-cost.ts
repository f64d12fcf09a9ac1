/**
 * `npx tsx bench/index-cost.ts`: what each index and column type of the audit index costs
 * PostgreSQL per record written (issue 35.3), without NATS or the indexer's decode: synthetic
 * records projected once, written the way the indexer writes new records (writeBatchIsolating,
 * the new-records path: binary COPY into the table, rollups per batch) into a database
 * pre-filled with BENCH_INDEX_COST_PREFILL records (default 50,000), then
 * BENCH_INDEX_COST_RECORDS (default 20,000) per variant: the schema as migrated, each index
 * dropped in turn, BRIN instead of the btree on time, the record as text instead of json (what
 * checking it is JSON costs), and the text key columns in the "C" collation; interleaved over
 * BENCH_INDEX_COST_ROUNDS rounds (default 3). The figure is the CPU of the PostgreSQL backends
 * serving the database, per record (from /proc: Linux), which a shared machine disturbs less
 * than wall time.
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { migrateIndex, openIndexPool, type PgPool } from "../src/indexer/index.js";
import { createTestDatabase, findPostgres } from "../test/support/postgres-server.js";
import { writeSyntheticRange, type SyntheticIndex } from "./support/synthetic-index.js";

const PREFILL = Number(process.env.BENCH_INDEX_COST_PREFILL ?? 50_000);
const RECORDS = Number(process.env.BENCH_INDEX_COST_RECORDS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_INDEX_COST_ROUNDS ?? 3);
const INDEX: SyntheticIndex = {
  namespace: "bench-cost",
  sessions: 2000,
  startMs: Date.now() - 86_400_000,
};

/** CPU ms of the backends serving the database (utime + stime, 10 ms ticks). */
async function backendCpuMs(pool: PgPool, name: string): Promise<number> {
  const r = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1",
    [name],
  );
  let ms = 0;
  for (const { pid } of r.rows) {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    ms += (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return ms;
}

interface Variant {
  name: string;
  /** DDL before the variant's writes, and the DDL that restores the schema after them. */
  apply: string;
  restore: string;
}

const dropped = (index: string, definition: string): Variant => ({
  name: `without ${index}`,
  apply: `DROP INDEX ${index}`,
  restore: definition,
});

const VARIANTS: Variant[] = [
  { name: "all indexes", apply: "", restore: "" },
  dropped(
    "hookbus_records_session",
    "CREATE INDEX hookbus_records_session ON hookbus_records (ns, session_key, seq)",
  ),
  dropped(
    "hookbus_records_agent",
    "CREATE INDEX hookbus_records_agent ON hookbus_records (ns, agent_id, outcome, seq)",
  ),
  dropped(
    "hookbus_records_time",
    "CREATE INDEX hookbus_records_time ON hookbus_records (ns, stored_at, seq)",
  ),
  {
    name: "BRIN on time instead of the btree",
    apply:
      "DROP INDEX hookbus_records_time; CREATE INDEX hookbus_records_time_brin ON hookbus_records USING brin (stored_at)",
    restore:
      "DROP INDEX hookbus_records_time_brin; CREATE INDEX hookbus_records_time ON hookbus_records (ns, stored_at, seq)",
  },
  dropped(
    "hookbus_records_run",
    "CREATE INDEX hookbus_records_run ON hookbus_records (ns, run_id, seq) WHERE run_id IS NOT NULL",
  ),
  dropped(
    "hookbus_policy_outcomes_policy",
    "CREATE INDEX hookbus_policy_outcomes_policy ON hookbus_policy_outcomes (ns, policy, status, seq)",
  ),
  dropped(
    "hookbus_records_ok_policies",
    "CREATE INDEX hookbus_records_ok_policies ON hookbus_records USING gin (ok_policies)",
  ),
  {
    name: "record as text instead of json",
    apply: "ALTER TABLE hookbus_records ALTER COLUMN record TYPE text",
    restore: "ALTER TABLE hookbus_records ALTER COLUMN record TYPE json USING record::json",
  },
  {
    name: 'key columns in the "C" collation',
    apply: collate('"C"'),
    restore: collate(`"default"`),
  },
];

/** The text columns the btrees hold, in collation `name`. */
function collate(name: string): string {
  const columns = ["ns", "session_key", "agent_id", "outcome", "run_id"];
  return [
    `ALTER TABLE hookbus_records ${columns.map((c) => `ALTER COLUMN ${c} TYPE text COLLATE ${name}`).join(", ")}`,
    `ALTER TABLE hookbus_policy_outcomes ${["ns", "policy", "status"].map((c) => `ALTER COLUMN ${c} TYPE text COLLATE ${name}`).join(", ")}`,
  ].join("; ");
}

async function main(): Promise<void> {
  const server = await findPostgres();
  const db = await createTestDatabase(server, "hookbus_cost");
  // The variants rewrite the whole table (a type change): minutes on a loaded machine.
  const pool = openIndexPool(db.url, { max: 1, statementTimeoutMs: 600_000 });
  try {
    await migrateIndex(pool);
    // A view pins its columns' types (the collation variant changes them); it costs no write.
    await pool.query("DROP VIEW hookbus_policy_rows");
    await writeSyntheticRange(pool, INDEX, 0, PREFILL);
    await pool.query("VACUUM ANALYZE");
    let next = PREFILL;
    const costs = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++)
      for (const variant of VARIANTS) {
        if (variant.apply !== "") await pool.query(variant.apply);
        const cpu0 = await backendCpuMs(pool, db.name);
        await writeSyntheticRange(pool, INDEX, next, RECORDS);
        const us = ((await backendCpuMs(pool, db.name)) - cpu0) * (1000 / RECORDS);
        next += RECORDS;
        if (variant.restore !== "") await pool.query(variant.restore);
        costs.set(variant.name, [...(costs.get(variant.name) ?? []), us]);
        console.log(
          `  ${variant.name}: ${us.toFixed(1)} µs/record (load ${loadavg()[0]!.toFixed(1)})`,
        );
      }
    console.log(
      `PostgreSQL backend CPU per record written (${PREFILL} prefilled, ${RECORDS} per run):`,
    );
    for (const [name, runs] of costs)
      console.log(`${name}: ${runs.map((us) => us.toFixed(1)).join(" / ")} µs/record`);
  } finally {
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();
