/**
 * `npm run bench:privacy` (issue 36 item 4): what per-subject encryption costs. The A/B of
 * item 1 is `npm run bench`'s `encrypt_cpu_pct` too (fewer rounds there); this run adds the
 * erasure's time. docs/benchmarks.md "Privacy" has the figures.
 *
 * 1. Node CPU per call with encryption on against off: three decision paths in this one process
 *    (agent, coordinator and three workers each): plain, with a KEK, plain again, measured in
 *    rounds of the same concurrent load, the order rotating (bench/support/bracketed-cost.ts);
 *    the median of the
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
import { parseKek } from "../src/privacy/index.js";
import { findNatsServer } from "../src/testing/nats.js";
import { createTestDatabase, findPostgres } from "../test/support/postgres-server.js";
import { bracketedCost, describePct } from "./support/bracketed-cost.js";
import {
  BENCH_EVENT,
  BenchConnections,
  concurrent,
  laneCall,
  openRoles,
  startDecisionPath,
} from "./support/decision-path.js";
import { clearBenchRecord, sealWorkPerRecordUs } from "./support/seal-work.js";

const ROUNDS = Number(process.env.BENCH_PRIVACY_ROUNDS ?? 8);
const CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 3000);
const CONCURRENCY = 64;
const ERASE_RECORDS = 1000;
const NAMESPACE = `bpriv${Date.now().toString(36)}`;
const kek = parseKek(randomBytes(32).toString("hex"), "bench");

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
    const cost = await bracketedCost({
      plain: sides[0]!,
      candidates: { sealed: sides[1]! },
      plainAgain: sides[2]!,
      rounds: ROUNDS,
      calls: CALLS,
      concurrency: CONCURRENCY,
    });
    const sealedCost = cost.candidates.sealed;

    // The sealing work alone, on the plain path's record of the same call (what the other seals).
    const sealUs = sealWorkPerRecordUs(await clearBenchRecord(roles.coordinator, NAMESPACE));
    const sealPct = (sealUs / cost.plainUs) * 100;
    const bus = await Bus.open(roles.coordinator, { namespace: `${NAMESPACE}e` });

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
      `Node CPU per call at concurrency ${CONCURRENCY} (agent + coordinator + 3 workers): ${f(sealedCost.us, 0)} µs encrypted, ${f(cost.plainUs, 0)} µs in clear (two plain paths around it); median of ${ROUNDS} rounds ${describePct(sealedCost.medianPct, sealedCost.pcts)}; the two plain paths against each other ${describePct(cost.aaPct, cost.aaPcts)}`,
    );
    console.log(
      `sealing work per record (measured alone): ${f(sealUs, 2)} µs = ${f(sealPct, 2)} % of the CPU per call in clear`,
    );
    console.log(
      `erase: one session of ${ERASE_RECORDS} records, ${erased.record.rowsScrubbed ?? 0} index rows scrubbed, key ${erased.record.keyPurged ? "purged" : "missing"}, in ${f(eraseMs, 0)} ms`,
    );
    console.log(
      `privacy: encrypt_cpu_pct=${f(sealedCost.medianPct)} aa_cpu_pct=${f(cost.aaPct)} seal_us=${f(sealUs, 2)} seal_work_pct=${f(sealPct, 2)} erase_1000_ms=${f(eraseMs, 0)}`,
    );
  } finally {
    await conns.drain();
    await pool.end();
    await db.drop();
    await server.stop();
  }
}

await main();
