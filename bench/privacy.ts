/**
 * `npm run bench:privacy` (issue 36 item 4): what per-subject encryption costs. Apart from
 * `npm run bench`, whose run is long already; docs/benchmarks.md "Privacy" has the figures.
 *
 * 1. Node CPU per call with encryption on against off: two decision paths in this one process
 *    (agent, coordinator and three workers each), one plain and one with a KEK, measured in paired
 *    rounds of the same concurrent load, the order alternating each round; the median of the
 *    rounds' differences is `encrypt_cpu_pct` (goal ≤ 5 %). The sealing work alone (sealRecord on
 *    the benchmark's record, measured in a loop) is `seal_us` and its share `seal_work_pct`: steady
 *    where the A/B is noisy on a shared machine.
 * 2. Erasing one session of 1,000 recorded, indexed records (`eraseSubject` with the index: key
 *    purge, index scrub, signed erasure record) is `erase_1000_ms` (goal ≤ 1000).
 *
 * The LAST line: `privacy: encrypt_cpu_pct=… seal_us=… seal_work_pct=… erase_1000_ms=…`.
 */
import { randomBytes } from "node:crypto";
import { Bus } from "../src/bus/bus.js";
import { eraseSubject } from "../src/erasure/erase.js";
import { migrateIndex, openIndexPool, startIndexer } from "../src/indexer/index.js";
import { createSigningKey, signingKeyFromSeed } from "../src/log/sign/keys.js";
import type { LogRecord } from "../src/log/record.js";
import { parseKek, sealRecord, subjectDigest } from "../src/privacy/index.js";
import { findNatsServer } from "../src/testing/nats.js";
import { createTestDatabase, findPostgres } from "../test/support/postgres-server.js";
import { CostMeter } from "./support/cost.js";
import {
  BENCH_EVENT,
  BenchConnections,
  concurrent,
  laneCall,
  openRoles,
  startDecisionPath,
} from "./support/decision-path.js";

const ROUNDS = Number(process.env.BENCH_PRIVACY_ROUNDS ?? 8);
const CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 3000);
const CONCURRENCY = 64;
const ERASE_RECORDS = 1000;
const NAMESPACE = `bpriv${Date.now().toString(36)}`;
const kek = parseKek(randomBytes(32).toString("hex"), "bench");

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length / 2;
  return s.length % 2 === 1 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
};

type Call = (lane: number) => Promise<unknown>;

/** Paired rounds, order alternating; per side the mean CPU per call, and the median difference. */
async function pairedCost(off: Call, on: Call) {
  const pcts: number[] = [];
  const us = { off: 0, on: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const meters = { off: new CostMeter(), on: new CostMeter() };
    const sides = round % 2 === 0 ? (["off", "on"] as const) : (["on", "off"] as const);
    for (const side of sides) {
      const call = side === "on" ? on : off;
      await meters[side].measure(CALLS, () => concurrent(call, CALLS, CONCURRENCY));
    }
    const o = meters.off.perCall().cpuUs;
    const n = meters.on.perCall().cpuUs;
    us.off += o / ROUNDS;
    us.on += n / ROUNDS;
    pcts.push((n / o - 1) * 100);
  }
  return { pcts, ...us, medianPct: median(pcts) };
}

/** The CPU of sealing one record, measured alone (µs). */
function sealWorkUs(record: LogRecord): number {
  const key = { kid: "0123456789abcdef", key: randomBytes(32) };
  const subject = subjectDigest("session:bench");
  const n = 20_000;
  for (let i = 0; i < 2000; i++) sealRecord(record, subject, key);
  const before = process.cpuUsage();
  for (let i = 0; i < n; i++) sealRecord(record, subject, key);
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / n;
}

async function main(): Promise<void> {
  const server = await findNatsServer({ own: true });
  const pgServer = await findPostgres();
  const db = await createTestDatabase(pgServer, "hookbus_bench_privacy");
  const pool = openIndexPool(db.url, { max: 4 });
  const conns = new BenchConnections(server.url);
  try {
    const roles = await openRoles(conns);
    const plain = await startDecisionPath(roles, NAMESPACE);
    const sealed = await startDecisionPath(roles, `${NAMESPACE}e`, { privacy: { kek } });
    const off = laneCall(plain.client, CONCURRENCY);
    const on = laneCall(sealed.client, CONCURRENCY);
    await concurrent(off, 1000, CONCURRENCY); // warm both: JIT, connections, stream files, keys
    await concurrent(on, 1000, CONCURRENCY);
    const cost = await pairedCost(off, on);

    // The sealing work alone, on the record the encrypted path stores for the benchmark call.
    const bus = await Bus.open(roles.coordinator, { namespace: `${NAMESPACE}e` });
    const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, {
      last_by_subj: `${NAMESPACE}e.audit.>`,
    });
    const sample = JSON.parse(stored!.string()) as LogRecord & { encrypted?: unknown };
    const { encrypted: _omitted, ...clearShape } = sample;
    const record = { ...clearShape, event: BENCH_EVENT } as unknown as LogRecord;
    const sealUs = sealWorkUs(record);
    const sealPct = (sealUs / cost.off) * 100;

    // One session of 1,000 records, indexed, then erased.
    await migrateIndex(pool);
    const indexer = await startIndexer({ bus, pool });
    const ctx = {
      agentId: "bench-agent",
      sessionKey: "erase-me",
      runId: "r",
      toolName: "read_file",
    };
    for (let i = 0; i < ERASE_RECORDS; i++)
      await sealed.client.beforeToolCall({ ...ctx, toolCallId: `c${i}` }, BENCH_EVENT);
    const deadline = Date.now() + 60_000;
    while ((await indexer.lag()).records > 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    const erased = await eraseSubject(
      { target: "session", id: "erase-me", reason: "bench", by: "bench" },
      { bus, index: pool, signingKey: signingKeyFromSeed(createSigningKey().seed) },
    );
    const eraseMs = performance.now() - t0;
    await indexer.stop();
    await plain.stop();
    await sealed.stop();

    const f = (n: number, d = 1) => n.toFixed(d);
    console.log(`nats: ${server.source} ${server.url}; postgres: ${pgServer.source}`);
    console.log(
      `Node CPU per call at concurrency ${CONCURRENCY} (agent + coordinator + 3 workers): ${f(cost.on, 0)} µs encrypted, ${f(cost.off, 0)} µs in clear; median of ${ROUNDS} paired rounds ${cost.medianPct >= 0 ? "+" : ""}${f(cost.medianPct)} % (rounds: ${cost.pcts.map((p) => f(p)).join(", ")})`,
    );
    console.log(
      `sealing work per record (measured alone): ${f(sealUs, 2)} µs = ${f(sealPct, 2)} % of the CPU per call in clear`,
    );
    console.log(
      `erase: one session of ${ERASE_RECORDS} records, ${erased.record.rowsScrubbed ?? 0} index rows scrubbed, key ${erased.record.keyPurged ? "purged" : "missing"}, in ${f(eraseMs, 0)} ms`,
    );
    console.log(
      `privacy: encrypt_cpu_pct=${f(cost.medianPct)} seal_us=${f(sealUs, 2)} seal_work_pct=${f(sealPct, 2)} erase_1000_ms=${f(eraseMs, 0)}`,
    );
  } finally {
    await conns.drain();
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();
