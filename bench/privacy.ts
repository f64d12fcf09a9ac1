/**
 * `npm run bench:privacy` (issue 36 item 4): what per-subject encryption costs. Apart from
 * `npm run bench`, whose run is long already; docs/benchmarks.md "Privacy" has the figures.
 *
 * 1. Node CPU per call with encryption on against off: three decision paths in this one process
 *    (agent, coordinator and three workers each): plain, with a KEK, plain again, measured in
 *    rounds of the same concurrent load, the order rotating (bracketedCost); the median of the
 *    rounds' differences is `encrypt_cpu_pct` (goal ≤ 5 %), and `aa_cpu_pct` the two plain paths'
 *    difference, the noise floor of the same run. The sealing work alone (sealRecord on
 *    the benchmark's record, measured in a loop) is `seal_us` and its share `seal_work_pct`: steady
 *    where the A/B is noisy on a shared machine.
 * 2. Erasing one session of 1,000 recorded, indexed records (`eraseSubject` with the index: key
 *    purge, index scrub, signed erasure record) is `erase_1000_ms` (goal ≤ 1000).
 *
 * The LAST line: `privacy: encrypt_cpu_pct=… aa_cpu_pct=… seal_us=… seal_work_pct=… erase_1000_ms=…`.
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

/**
 * Rounds over three sides, the order rotating each round: plain (started first), encrypted
 * (second) and plain again (third). The two plain sides bracket the encrypted one, so a cost that
 * comes with a path's place (measured: an A/A of two plain paths read +12 %) does not count as
 * encryption's: each round's figure is encrypted / mean(plain, plain again) − 1, and `aaPct` is
 * plain again / plain − 1, the noise floor of the same run.
 */
async function bracketedCost(plain: Call, sealed: Call, plainAgain: Call) {
  const calls = { plain, sealed, plainAgain };
  const sidesInOrder = ["plain", "sealed", "plainAgain"] as const;
  const pcts: number[] = [];
  const aaPcts: number[] = [];
  const us = { plain: 0, sealed: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const meters = { plain: new CostMeter(), sealed: new CostMeter(), plainAgain: new CostMeter() };
    for (let i = 0; i < 3; i++) {
      const side = sidesInOrder[(round + i) % 3]!;
      await meters[side].measure(CALLS, () => concurrent(calls[side], CALLS, CONCURRENCY));
    }
    const p1 = meters.plain.perCall().cpuUs;
    const p2 = meters.plainAgain.perCall().cpuUs;
    const e = meters.sealed.perCall().cpuUs;
    us.plain += (p1 + p2) / 2 / ROUNDS;
    us.sealed += e / ROUNDS;
    pcts.push((e / ((p1 + p2) / 2) - 1) * 100);
    aaPcts.push((p2 / p1 - 1) * 100);
  }
  return { pcts, aaPcts, ...us, medianPct: median(pcts), aaPct: median(aaPcts) };
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
    const plainAgain = await startDecisionPath(roles, `${NAMESPACE}p`);
    const sides = [plain, sealed, plainAgain].map((path) => laneCall(path.client, CONCURRENCY));
    for (const side of sides) await concurrent(side, 1000, CONCURRENCY); // JIT, streams, keys
    const cost = await bracketedCost(sides[0]!, sides[1]!, sides[2]!);

    // The sealing work alone, on the record the encrypted path stores for the benchmark call.
    const bus = await Bus.open(roles.coordinator, { namespace: `${NAMESPACE}e` });
    const stored = await bus.jsm.streams.getMessage(bus.subjects.logStream, {
      last_by_subj: `${NAMESPACE}e.audit.>`,
    });
    const sample = JSON.parse(stored!.string()) as LogRecord & { encrypted?: unknown };
    const { encrypted: _omitted, ...clearShape } = sample;
    const record = { ...clearShape, event: BENCH_EVENT } as unknown as LogRecord;
    const sealUs = sealWorkUs(record);
    const sealPct = (sealUs / cost.plain) * 100;

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
    await plainAgain.stop();

    const f = (n: number, d = 1) => n.toFixed(d);
    console.log(`nats: ${server.source} ${server.url}; postgres: ${pgServer.source}`);
    console.log(
      `Node CPU per call at concurrency ${CONCURRENCY} (agent + coordinator + 3 workers): ${f(cost.sealed, 0)} µs encrypted, ${f(cost.plain, 0)} µs in clear (two plain paths around it); median of ${ROUNDS} rounds ${cost.medianPct >= 0 ? "+" : ""}${f(cost.medianPct)} % (rounds: ${cost.pcts.map((p) => f(p)).join(", ")}); the two plain paths against each other ${f(cost.aaPct)} % (rounds: ${cost.aaPcts.map((p) => f(p)).join(", ")})`,
    );
    console.log(
      `sealing work per record (measured alone): ${f(sealUs, 2)} µs = ${f(sealPct, 2)} % of the CPU per call in clear`,
    );
    console.log(
      `erase: one session of ${ERASE_RECORDS} records, ${erased.record.rowsScrubbed ?? 0} index rows scrubbed, key ${erased.record.keyPurged ? "purged" : "missing"}, in ${f(eraseMs, 0)} ms`,
    );
    console.log(
      `privacy: encrypt_cpu_pct=${f(cost.medianPct)} aa_cpu_pct=${f(cost.aaPct)} seal_us=${f(sealUs, 2)} seal_work_pct=${f(sealPct, 2)} erase_1000_ms=${f(eraseMs, 0)}`,
    );
  } finally {
    await conns.drain();
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();
