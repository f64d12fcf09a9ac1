/**
 * Taking back, at start, the records a dead indexer process held unacked on the shared durable.
 *
 * The server keeps such a record "ack pending" until its ack wait (`--ack-wait`, 30 s) runs out,
 * whoever asks for more: an indexer killed near the end of a load used to leave thousands of
 * records waiting that long. A starting indexer cannot tell which of the durable's unacked
 * records belonged to the dead process, so it NAKs every sequence between the durable's ack floor
 * and its last delivery: the server puts those still pending on its redelivery queue (at once,
 * ahead of new records) and ignores the rest (acked ones, or sequences that are not the log's).
 *
 * Why this is safe for exactly-once into PostgreSQL: rows are keyed by stream sequence and the
 * rollups count only what an insert RETURNs (writer.ts), so a record written twice is stored and
 * counted once. What it costs: a live peer indexer's in-flight records are redelivered too (they
 * are written by whoever commits first, the other write finds them there: `duplicates`), at most
 * the durable's `max_ack_pending`. Why not a consumer per process, or an ordered consumer from
 * a position kept in PostgreSQL: both would give up the one durable that the namespace's
 * indexers share (its permissions, its lag in `hookbus status`), for a gain the keyed rows
 * already give.
 *
 * How: a NAK is a publish to the ack subject a delivery carries
 * (`$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>`); the
 * server checks only that the stream sequence is pending and the consumer sequence lies between
 * its ack floor and its last delivery (nats-server 2.9; test/integration/indexer/restart.test.ts
 * proves it on the server the project runs). The indexer's NATS user may already publish there
 * (it acks).
 */
import type { Bus } from "../bus/bus.js";

/** At most this many NAKs per start; beyond, the rest wait out their ack wait as before. */
export const MAX_RECLAIM = 100_000;

const NAK = new TextEncoder().encode("-NAK");

export interface Reclaimed {
  /** Records the durable held unacked when the indexer started. */
  unacked: number;
  /** Sequences NAKed (the span from the ack floor to the last delivery, bounded by MAX_RECLAIM). */
  naked: number;
  /** Sequences past MAX_RECLAIM left to their ack wait. */
  leftToAckWait: number;
}

/** NAKs what the durable `consumer` holds unacked, so the server redelivers it now. */
export async function reclaimUnacked(bus: Bus, consumer: string): Promise<Reclaimed> {
  const stream = bus.subjects.logStream;
  const info = await bus.jsm.consumers.info(stream, consumer);
  const unacked = info.num_ack_pending;
  if (unacked === 0) return { unacked, naked: 0, leftToAckWait: 0 };
  const first = info.ack_floor.stream_seq + 1;
  const span = info.delivered.stream_seq - first + 1;
  const naked = Math.max(0, Math.min(span, MAX_RECLAIM));
  // Any consumer sequence above the ack floor and at most the last delivery passes the server's
  // check: the last delivery's is.
  const prefix = `$JS.ACK.${stream}.${consumer}.1.`;
  const suffix = `.${info.delivered.consumer_seq}.0.0`;
  for (let seq = first; seq < first + naked; seq++) bus.nc.publish(`${prefix}${seq}${suffix}`, NAK);
  await bus.nc.flush();
  return { unacked, naked, leftToAckWait: span - naked };
}
