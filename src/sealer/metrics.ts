/**
 * Prometheus metrics of one sealer (`hookbus sealer --http`), in its own Registry. Evidence lag is
 * read from the streams at scrape time (as `hookbus status` does), so a standby reports the same
 * lag as the active sealer and a stalled sealer cannot report itself as caught up; when the
 * streams cannot be read, the sealer's own view is reported instead.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { Bus } from "../bus/bus.js";
import { readSealLag, type SealLag } from "./lag.js";
import { newRegistry } from "../observability/metrics.js";
import { beforeDeadline } from "../foundation/deadline.js";

/** A scrape waits this long for the streams before reporting the sealer's own view. */
const LAG_READ_TIMEOUT_MS = 2000;

export function sealerRegistry(bus: Bus, id: string, own: () => SealLag): Registry {
  const registry = newRegistry("sealer", id);
  const registers = [registry];
  let streams: { records: number; seconds: number; sealedSeq: number } | undefined;
  new Gauge({
    name: "hookbus_seal_lag_records",
    help: "Log records stored but not yet sealed (tamper evidence lag), read from the log and seal streams.",
    registers,
    async collect() {
      // Unreadable within the bound: the sealer's own reading stands in (a scrape must not hang).
      streams = await beforeDeadline(
        readSealLag(bus),
        Date.now() + LAG_READ_TIMEOUT_MS,
        "HOOKBUS_LOG_UNAVAILABLE",
        () => `no seal lag reading within ${LAG_READ_TIMEOUT_MS} ms`,
      ).catch(() => undefined);
      this.set(streams?.records ?? own().records);
    },
  });
  new Gauge({
    name: "hookbus_seal_lag_seconds",
    help: "Age in seconds of the oldest log record not yet sealed (0 when everything is sealed).",
    registers,
    collect() {
      // Registered after the records gauge, so collected after it: the same reading.
      this.set(streams?.seconds ?? own().seconds);
    },
  });
  new Gauge({
    name: "hookbus_sealed_sequence",
    help: "The last log sequence covered by a seal batch.",
    registers,
    collect() {
      this.set(streams?.sealedSeq ?? own().sealedSeq);
    },
  });
  let counted = 0;
  new Counter({
    name: "hookbus_seal_batches_total",
    help: "Seal batches this sealer process stored.",
    registers,
    collect() {
      const batches = own().batches;
      if (batches > counted) this.inc(batches - counted);
      counted = batches;
    },
  });
  new Gauge({
    name: "hookbus_sealer_lease_held",
    help: "1 while this sealer holds the lease and seals, 0 while it stands by.",
    registers,
    collect() {
      this.set(own().active ? 1 : 0);
    },
  });
  return registry;
}
