/**
 * What an indexer tells the outside (`hookbus indexer --http`): Prometheus metrics, among them its
 * lag in records and seconds (read from the durable consumer at scrape time, so every indexer of
 * the namespace reports the same shared lag), and readiness.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { followConnection } from "../observability/connection-state.js";
import type { Readiness } from "../observability/http.js";
import type { ObservableService } from "../observability/service-http.js";
import type { IndexLag, Indexer, IndexerStats } from "./indexer.js";
import { beforeDeadline } from "../foundation/deadline.js";

/** A scrape never waits longer than this for the lag (the last value is shown meanwhile). */
const LAG_READ_MS = 2000;

export interface IndexerTelemetry extends ObservableService {
  /** The lag last read (by a scrape); undefined before the first. */
  lastLag(): IndexLag | undefined;
}

/** The durable's configuration, bounded like the lag read (a slow server shows the last value). */
async function readMismatch(indexer: Indexer): Promise<boolean> {
  const found = await beforeDeadline(
    indexer.consumerMismatches(),
    Date.now() + LAG_READ_MS,
    "HOOKBUS_INDEX_UNAVAILABLE",
    () => `consumer read timed out after ${LAG_READ_MS} ms`,
  );
  return found.length > 0;
}

/**
 * The lag gauges: one bounded read per scrape (a slow server shows the previous value, not a
 * hang), shared by the three. prom-client collects a registry's metrics in parallel, so each
 * gauge awaits the read in flight rather than assuming another gauge ran first (lag_seconds
 * used to show the previous scrape's age beside this scrape's record count).
 */
function lagGauges(registry: Registry, indexer: Indexer): () => IndexLag | undefined {
  let lag: IndexLag | undefined;
  let lagError = false;
  let reading: Promise<void> | undefined;

  async function readLag(): Promise<void> {
    try {
      lag = await beforeDeadline(
        indexer.lag(),
        Date.now() + LAG_READ_MS,
        "HOOKBUS_INDEX_UNAVAILABLE",
        () => `lag read timed out after ${LAG_READ_MS} ms`,
      );
      lagError = false;
    } catch {
      // Shown as the hookbus_index_lag_error gauge; the previous value stays.
      lagError = true;
    }
  }
  /** The read in flight, or a new one: the gauges of one scrape share it. */
  const freshLag = (): Promise<void> =>
    (reading ??= readLag().finally(() => {
      reading = undefined;
    }));

  new Gauge({
    name: "hookbus_indexer_lag_records",
    help: "Records in the log not yet indexed (pending + unacknowledged on the shared consumer).",
    registers: [registry],
    async collect() {
      await freshLag();
      if (lag !== undefined) this.set(lag.records);
    },
  });
  new Gauge({
    name: "hookbus_indexer_lag_seconds",
    help: "Age of the oldest record not yet indexed; 0 when caught up.",
    registers: [registry],
    async collect() {
      await freshLag();
      if (lag !== undefined) this.set(lag.seconds);
    },
  });
  new Gauge({
    name: "hookbus_indexer_lag_read_failed",
    help: "1 when the last lag read failed or timed out (the lag gauges then show the previous value).",
    registers: [registry],
    async collect() {
      await freshLag();
      this.set(lagError ? 1 : 0);
    },
  });
  return () => lag;
}

/** Whether the durable differs from the indexer's, read at scrape (the last reading stands). */
function mismatchGauge(registry: Registry, indexer: Indexer): () => boolean {
  let mismatch = false;
  new Gauge({
    name: "hookbus_consumer_config_mismatch",
    help: "1 when the indexer's durable consumer is not configured as the indexer creates it (HOOKBUS_CONSUMER_MISMATCH: someone else created or altered it); read at scrape.",
    registers: [registry],
    async collect() {
      // Unreadable: the last reading stands (as the help says). It is the same consumer info as
      // the lag's, whose failure hookbus_indexer_lag_read_failed shows in this scrape.
      mismatch = await readMismatch(indexer).catch(() => mismatch);
      this.set(mismatch ? 1 : 0);
    },
  });
  return () => mismatch;
}

/** The indexer's own counts, as counters. */
function statCounters(registry: Registry, stats: Readonly<IndexerStats>): void {
  const counted = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  counted(
    "hookbus_indexer_records_indexed_total",
    "Records this indexer wrote.",
    () => stats.indexed,
  );
  counted(
    "hookbus_indexer_records_duplicate_total",
    "Records received again that were already indexed (redeliveries, replays).",
    () => stats.duplicates,
  );
  counted(
    "hookbus_indexer_records_invalid_total",
    "Records that could not be decoded, indexed as invalid.",
    () => stats.invalid,
  );
  counted("hookbus_indexer_batches_total", "Committed batches.", () => stats.batches);
  counted(
    "hookbus_indexer_write_failures_total",
    "Failed batch writes (each retried; nothing is acked until it commits).",
    () => stats.writeFailures,
  );
  counted(
    "hookbus_indexer_records_reclaimed_total",
    "Records the shared consumer held unacked when this indexer started, redelivered at once (a dead indexer's, or a live peer's in flight).",
    () => stats.reclaimed,
  );
}

export function indexerTelemetry(
  indexer: Indexer,
  nc: NatsConnection,
  id = indexer.consumer,
): IndexerTelemetry {
  const registry = new Registry();
  registry.setDefaultLabels({ role: "indexer", instance_id: id });
  collectDefaultMetrics({ register: registry, prefix: "hookbus_" });
  const connection = followConnection(nc);
  const lastLag = lagGauges(registry, indexer);
  const mismatch = mismatchGauge(registry, indexer);
  statCounters(registry, indexer.stats);

  return {
    metrics: registry,
    lastLag,
    ready(): Readiness {
      const reasons: string[] = [];
      if (!connection.connected()) reasons.push("not connected to NATS");
      if (indexer.writeFailing())
        reasons.push("index writes are failing (PostgreSQL unreachable or refusing): see the log");
      if (indexer.stopped()) reasons.push("stopping");
      if (mismatch())
        reasons.push(
          "its durable consumer was altered by someone else (HOOKBUS_CONSUMER_MISMATCH)",
        );
      return { ready: reasons.length === 0, reasons };
    },
  };
}
