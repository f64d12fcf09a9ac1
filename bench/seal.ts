/**
 * `npm run bench:seal`: evidence lag at the decision bench's load. A coordinator, three policies
 * and a sealer run on one server; 64 concurrent sessions make BENCH_CONCURRENT_CALLS calls (as
 * `npm run bench`'s throughput rounds do), twice. Each record's seal lag is the time from the log
 * storing it to the seal stream storing the batch that seals it (both server timestamps). The LAST
 * line is machine-readable:
 *   bench:seal: p50_ms=<…> p99_ms=<…> max_ms=<…> records=<n> batches=<n> calls_per_s=<…>
 */
import { DeliverPolicy } from "@nats-io/jetstream";
import { Bus } from "../src/bus/bus.js";
import { sealStreamName } from "../src/log/seal/batch.js";
import { createSealKey, sealKeyFromSeed } from "../src/log/seal/keys.js";
import { readSealLag } from "../src/sealer/lag.js";
import { startSealer } from "../src/sealer/sealer.js";
import { SealBatch } from "../src/log/seal/batch.js";
import { findNatsServer } from "../src/testing/nats.js";
import {
  BenchConnections,
  laneCall,
  openRoles,
  startDecisionPath,
} from "./support/decision-path.js";

const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 3000);
const CONCURRENCY = 64;
const NAMESPACE = `benchseal${Date.now().toString(36)}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Server timestamps (ms) of every message of a stream, by sequence. */
async function storedTimes(
  bus: Bus,
  stream: string,
): Promise<Map<number, { at: number; data: Uint8Array }>> {
  const out = new Map<number, { at: number; data: Uint8Array }>();
  const last = (await bus.jsm.streams.info(stream)).state.last_seq;
  const consumer = await bus.js.consumers.get(stream, { deliver_policy: DeliverPolicy.All });
  const messages = await consumer.consume({ max_messages: 1024 });
  for await (const msg of messages) {
    out.set(msg.seq, { at: msg.info.timestampNanos / 1e6, data: msg.data });
    if (msg.seq >= last) break;
  }
  messages.stop();
  await consumer.delete().catch(() => {});
  return out;
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  const conns = new BenchConnections(server.url);
  const roles = await openRoles(conns);
  const hookbus = await startDecisionPath(roles, NAMESPACE);
  const sealer = await startSealer({
    nc: await conns.open("sealer"),
    namespace: NAMESPACE,
    key: sealKeyFromSeed(createSealKey().seed),
    logger: (await import("pino")).pino({ level: process.env.BENCH_SEAL_LOG ?? "silent" }),
  });
  const call = laneCall(hookbus.client, CONCURRENCY);
  const rates: number[] = [];
  let maxLagRecords = 0;
  const sampler = setInterval(
    () => (maxLagRecords = Math.max(maxLagRecords, sealer.lag().records)),
    50,
  );
  for (let round = 0; round < 2; round++) {
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, lane) => {
        while (next++ < CONCURRENT_CALLS) await call(lane);
      }),
    );
    rates.push(CONCURRENT_CALLS / ((performance.now() - t0) / 1000));
  }
  clearInterval(sampler);
  const bus = await Bus.open(roles.agent, { namespace: NAMESPACE });
  const last = (await bus.jsm.streams.info(bus.subjects.logStream)).state.last_seq;
  while ((await readSealLag(bus)).sealedSeq < last) await new Promise((r) => setTimeout(r, 20));

  const log = await storedTimes(bus, bus.subjects.logStream);
  const seals = await storedTimes(bus, sealStreamName(bus.subjects));
  const lags: number[] = [];
  for (const { at, data } of seals.values()) {
    const batch = SealBatch.parse(JSON.parse(new TextDecoder().decode(data)));
    for (const s of batch.sessions) for (const [seq] of s.records) lags.push(at - log.get(seq)!.at);
  }
  await hookbus.stop();
  await sealer.stop();
  await conns.drain();
  await server.stop();

  const sorted = lags.sort((a, b) => a - b);
  const f = (n: number) => n.toFixed(1);
  const rate = rates.reduce((s, x) => s + x, 0) / rates.length;
  console.log(
    `nats: ${server.source} ${server.url}; ${CONCURRENT_CALLS} calls ×2 at concurrency ${CONCURRENCY}, 3 policies; sealer defaults (500 records or 100 ms per batch)`,
  );
  console.log(
    `seal lag: p50 ${f(percentile(sorted, 50))} ms, p99 ${f(percentile(sorted, 99))} ms, max ${f(sorted.at(-1) ?? 0)} ms over ${sorted.length} records in ${seals.size} batches; most records behind at once: ${maxLagRecords}`,
  );
  console.log(
    `bench:seal: p50_ms=${f(percentile(sorted, 50))} p99_ms=${f(percentile(sorted, 99))} max_ms=${f(sorted.at(-1) ?? 0)} records=${sorted.length} batches=${seals.size} calls_per_s=${rate.toFixed(0)}`,
  );
}

await main();
