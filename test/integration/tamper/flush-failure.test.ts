/**
 * A seal batch stored whose heads never reached KV (the persist failed: a NATS restart, a KV
 * timeout) must stay past the heads' `_through` mark, so the next round replays it (repair.ts).
 * Before, a flush already queued behind the failed one sealed the next batch in the same round and
 * moved the mark over it: the next round then continued a session of the failed batch from its
 * older head, and verify reported a `session-chain-break` on an untampered log (the chaos run's
 * rare false alarm).
 */
import { Kvm } from "@nats-io/kv";
import { pino } from "pino";
import { afterAll, describe, expect, it, vi } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import { logStreamConfig } from "../../../src/bus/streams.js";
import { verifyLog } from "../../../src/audit/verify.js";
import { ensureSealStream } from "../../../src/log/seal/stream.js";
import { SealBatcher } from "../../../src/sealer/batcher.js";
import type { PendingRecord } from "../../../src/sealer/build-batch.js";
import { SessionHeads, THROUGH_KEY, headsBucketName } from "../../../src/sealer/heads.js";
import { SealerLease } from "../../../src/sealer/lease.js";
import { loadSealState } from "../../../src/sealer/seal-state.js";
import { uniqueNamespace, useNatsServer } from "../faults/harness.js";
import { sealKey } from "./harness.js";

const nats = useNatsServer();
const logger = pino({ level: "silent" });
const buses: Bus[] = [];

afterAll(async () => {
  for (const bus of buses) await bus.nc.close().catch(() => {});
});

/** Log records of `sessions` (one each, in order), as the sealer's log consumer reads them. */
async function logRecords(bus: Bus, sessions: string[]): Promise<PendingRecord[]> {
  const records: PendingRecord[] = [];
  for (const session of sessions) {
    const subject = bus.subjects.audit("agent", session, "unknown", "error");
    const data = new TextEncoder().encode(JSON.stringify({ n: records.length, session }));
    const ack = await bus.js.publish(subject, data);
    const msg = (await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq: ack.seq }))!;
    records.push({ seq: ack.seq, subject, data, storedAt: msg.time.getTime() });
  }
  return records;
}

describe("a failed heads write in the middle of a round", () => {
  it("stops the round's later flushes, so the next round repairs the heads and verify finds nothing", async () => {
    const bus = await Bus.open(await nats.connect(), { namespace: uniqueNamespace("flushfail") });
    buses.push(bus);
    await bus.jsm.streams.add(logStreamConfig(bus.subjects));
    await ensureSealStream(bus);
    const lease = await SealerLease.open(bus.nc, bus.subjects, "t", 60_000, 1, sealKey.pair);
    expect(await lease.acquire()).toBe(true);
    const heads = await SessionHeads.open(bus.nc, bus.subjects, 1000);
    const batcher = new SealBatcher({
      bus,
      key: sealKey.pair,
      lease,
      logger,
      stopping: () => false,
      id: "t",
      heads,
      signatures: undefined,
      maxBatch: 2,
      maxBatchBytes: 900_000,
    });
    // Batch 1: a, b. Batch 2: a, b (its heads are lost). Batch 3: b only. Batch 4: a.
    const [a1, b1, a2, b2, b3, b4, a3] = await logRecords(bus, ["a", "b", "a", "b", "b", "b", "a"]);

    batcher.begin(await loadSealState(bus, heads, logger));
    batcher.add(a1!, 0);
    batcher.add(b1!, 0);
    await batcher.flush();
    for (const r of [a2!, b2!, b3!, b4!]) batcher.add(r, 0);
    vi.spyOn(heads, "persist").mockRejectedValueOnce(new Error("the heads write was lost"));
    // Two flushes queued at once, as the read loop and the delay timer queue them.
    const [second, third] = await Promise.allSettled([batcher.flush(), batcher.flush()]);
    await batcher.settled();
    const through = (await new Kvm(bus.js)
      .open(headsBucketName(bus.subjects))
      .then((kv) => kv.get(THROUGH_KEY)))!.json();

    // The next round: from the seal stream's last batch, heads repaired up to it; the read loop
    // hands on only what that batch did not seal.
    const state = await loadSealState(bus, heads, logger);
    batcher.begin(state);
    for (const r of [b3!, b4!, a3!]) if (r.seq >= state.nextSeq) batcher.add(r, 0);
    while (batcher.buffer.length > 0) await batcher.flush();

    const report = await verifyLog(bus, { keys: [sealKey.publicKey] });
    expect(report.findings.filter((f) => f.kind === "seal")).toEqual([]);
    expect(report.sealed).toBe(7);
    expect(report.unsealed.records).toBe(0);
    // Batch 2 was stored, its heads were not; the flush queued behind it did not seal batch 3,
    // so the mark stayed at batch 1 and the next round replayed batch 2.
    expect(second).toMatchObject({
      status: "rejected",
      reason: { message: "the heads write was lost" },
    });
    expect(third).toMatchObject({
      status: "rejected",
      reason: { message: "the heads write was lost" },
    });
    expect(through).toEqual({ index: 1 });
    expect(state.index).toBe(2);
  });
});
