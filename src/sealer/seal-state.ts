/**
 * Where the active sealer resumes: read from the seal stream itself (its last batch), never from
 * what this process remembers, since another sealer may have sealed since this one last did.
 */
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { isStreamNotFound } from "../bus/streams.js";
import { HookbusError } from "../foundation/errors.js";
import { sealStreamName } from "../log/seal/batch.js";
import { lastBatch } from "../log/seal/stream.js";
import type { SessionHeads } from "./heads.js";
import { repairHeads } from "./repair.js";

export interface SealState {
  /** Index and hash of the last batch (0 / null: none). */
  index: number;
  hash: string | null;
  /** The next log sequence to seal. */
  nextSeq: number;
  /** The seal stream's last sequence (the expectation of the next append). */
  streamSeq: number;
}

/** The cursor after the seal stream's last batch, with the session heads of KV repaired up to it. */
export async function loadSealState(
  bus: Bus,
  heads: SessionHeads,
  logger: Logger,
): Promise<SealState> {
  // Another sealer may have sealed since this one last did: nothing cached stands.
  heads.forget();
  const last = await lastBatch(bus);
  if (last === undefined) {
    const firstSeq = await logFirstSeq(bus);
    const streamSeq = await bus.jsm.streams
      .info(sealStreamName(bus.subjects))
      .then((i) => i.state.last_seq);
    return { index: 0, hash: null, nextSeq: Math.max(1, firstSeq), streamSeq };
  }
  const batch = last.batch;
  if (batch === undefined) {
    throw new HookbusError(
      "HOOKBUS_INTERNAL",
      `the last seal batch (seal stream seq ${last.streamSeq}) is not a batch: ${last.invalid ?? ""}`,
    );
  }
  // Heads of the last batches may be missing from KV (a crash before they were written).
  await repairHeads(bus, heads, { ...last, batch }, logger);
  return {
    index: batch.index,
    hash: last.hash,
    nextSeq: batch.toSeq + 1,
    streamSeq: last.streamSeq,
  };
}

/**
 * Where the first chain starts: the log's first sequence, 1 when there is no log stream yet. Any
 * other failure fails the round (the sealer retries it): guessing 1 would seal a range the log
 * no longer has.
 */
async function logFirstSeq(bus: Bus): Promise<number> {
  try {
    return (await bus.jsm.streams.info(bus.subjects.logStream)).state.first_seq;
  } catch (error) {
    if (isStreamNotFound(error)) return 1;
    throw error;
  }
}
