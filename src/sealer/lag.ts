/**
 * Evidence lag read from the streams, from any process (`hookbus status`, metrics of another
 * service): how many log records are past the last seal batch, and how old the oldest of them is.
 */
import type { Bus } from "../bus/bus.js";
import { lastBatch } from "../log/seal/stream.js";

/** How far the seals are behind the log. */
export interface SealLag {
  /** Log records stored but not sealed yet (as last seen by this sealer). */
  records: number;
  /** Age of the oldest unsealed record this sealer holds, in seconds (0 when caught up). */
  seconds: number;
  /** The last log sequence sealed. */
  sealedSeq: number;
  /** Batches this process stored. */
  batches: number;
  /** Whether this sealer holds the lease. */
  active: boolean;
}

export interface StreamSealLag {
  /** Log records stored after the last sealed sequence. */
  records: number;
  /** Seconds since the oldest unsealed record was stored (0 when everything is sealed). */
  seconds: number;
  sealedSeq: number;
  logLastSeq: number;
  /** When the last batch was stored (undefined: no batch yet). */
  lastSealAt?: Date;
}

export async function readSealLag(bus: Bus): Promise<StreamSealLag> {
  const log = await bus.jsm.streams.info(bus.subjects.logStream);
  const last = await lastBatch(bus);
  const sealedSeq = last?.batch?.toSeq ?? Math.max(0, log.state.first_seq - 1);
  const records = Math.max(0, log.state.last_seq - sealedSeq);
  let seconds = 0;
  if (records > 0) {
    // The first stored message after the sealed range (a few deleted sequences are skipped).
    for (let seq = sealedSeq + 1; seq <= Math.min(log.state.last_seq, sealedSeq + 8); seq++) {
      // null: no message at this sequence (JetStream's "no message found"); other errors are thrown.
      const next = await bus.jsm.streams.getMessage(bus.subjects.logStream, { seq });
      if (next === null) continue;
      seconds = Math.max(0, (Date.now() - next.time.getTime()) / 1000);
      break;
    }
  }
  return {
    records,
    seconds,
    sealedSeq,
    logLastSeq: log.state.last_seq,
    ...(last === undefined ? {} : { lastSealAt: last.storedAt }),
  };
}
