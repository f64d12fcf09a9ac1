/**
 * The indexer's durable consumer as others see it: its name, its shape, and how far it is behind
 * the log. Kept apart from the ingest loop so that a reader of these facts (`hookbus status`)
 * loads nothing of PostgreSQL.
 */
import { AckPolicy, DeliverPolicy } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { durableMismatches, type DurableShape } from "../bus/durable-check.js";

export interface IndexLag {
  /** Records stored in the log and not yet indexed (pending + unacked). */
  records: number;
  /** Age of the oldest record not yet indexed (0 when caught up). */
  seconds: number;
}

/** The indexer's durable: the whole log, every record acked once indexed. */
export const INDEXER_DURABLE_SHAPE: DurableShape = {
  ack_policy: AckPolicy.Explicit,
  deliver_policy: DeliverPolicy.All,
};

/** How the durable `name` on the log differs from the indexer's (empty: it is the indexer's). */
export async function indexerConsumerMismatches(bus: Bus, name: string): Promise<string[]> {
  const info = await bus.jsm.consumers.info(bus.subjects.logStream, name);
  return durableMismatches(INDEXER_DURABLE_SHAPE, info.config);
}

export function defaultIndexerConsumer(bus: Bus): string {
  return `${bus.subjects.namespace}-indexer`;
}

/** How far the durable consumer `consumer` is behind the log. */
export async function indexLag(
  bus: Bus,
  consumer = defaultIndexerConsumer(bus),
): Promise<IndexLag> {
  const stream = bus.subjects.logStream;
  const info = await bus.jsm.consumers.info(stream, consumer);
  const records = info.num_pending + info.num_ack_pending;
  if (records === 0) return { records: 0, seconds: 0 };
  // null: the oldest unindexed record was removed by the stream's limits, so it has no age.
  const oldest = await bus.jsm.streams.getMessage(stream, {
    seq: info.ack_floor.stream_seq + 1,
  });
  const seconds = oldest === null ? 0 : Math.max(0, (Date.now() - oldest.time.getTime()) / 1000);
  return { records, seconds };
}
