/**
 * Heads after a crash: a sealer killed between storing a seal batch and writing its heads to KV
 * leaves KV behind for those sessions. Before sealing, the active sealer replays every batch after
 * the heads bucket's `_through` mark from the seal stream (the newest batch wins for each session)
 * and writes those heads, so it never continues a session from a stale head.
 */
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { sealStreamName, type SealBatch } from "../log/seal/batch.js";
import type { SessionHead, SessionHeads } from "./heads.js";
import { toStoredBatch, type StoredBatch } from "../log/seal/stream.js";

/**
 * Batches read back at most. Only batches stored while KV writes failed lie past the mark (a
 * failed write stops sealing until the repair succeeds), so this is reached only by a seal stream
 * that predates the mark, whose last batches then stand for the rest.
 */
export const MAX_REPAIR_BATCHES = 1000;

/** Replay the batches after the mark up to `last` into KV; returns how many were replayed. */
export async function repairHeads(
  bus: Bus,
  heads: SessionHeads,
  last: StoredBatch & { batch: SealBatch },
  logger: Logger,
): Promise<number> {
  const through = await heads.through();
  if (through !== undefined && through >= last.batch.index) return 0;
  const stream = sealStreamName(bus.subjects);
  const batches: SealBatch[] = [last.batch];
  for (let seq = last.streamSeq - 1; seq >= 1 && batches.length < MAX_REPAIR_BATCHES; seq--) {
    // A failed read throws (the sealer retries the whole start); only a missing message stops.
    const msg = await bus.jsm.streams.getMessage(stream, { seq });
    const batch =
      msg === null ? undefined : toStoredBatch(msg.seq, msg.data, msg.header, msg.time).batch;
    if (batch === undefined || (through !== undefined && batch.index <= through)) break;
    batches.push(batch);
  }
  if (through === undefined && batches.length === MAX_REPAIR_BATCHES) {
    logger.warn(
      { batches: batches.length },
      "the seal heads bucket has no _through mark (a seal stream from before it): heads repaired from the newest batches only",
    );
  }
  const newest = new Map<string, SessionHead>();
  for (const batch of batches.reverse()) {
    for (const s of batch.sessions) {
      newest.set(s.session, { hash: s.records.at(-1)![1], count: s.count });
    }
  }
  await heads.persist(newest, last.batch.index);
  logger.info(
    { batches: batches.length, sessions: newest.size, through: last.batch.index },
    "seal heads repaired from the seal stream",
  );
  return batches.length;
}
