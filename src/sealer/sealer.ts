/**
 * The sealer process role (`hookbus sealer`): reads the log in stream order and appends signed
 * seal batches to `<NS>_SEALS`, off the decision path (docs/tamper-evidence.md). Any number may
 * run; the one holding the lease seals, the others wait to take over when it expires.
 *
 * Its cursor is the seal stream itself (the last batch's `toSeq`), not a consumer's ack floor:
 * the seal stream is fenced by `Nats-Expected-Last-Sequence`, so whoever takes over resumes
 * exactly after the last batch anyone stored, and a record is never sealed twice or skipped.
 */
import { nuid, type NatsConnection } from "@nats-io/transport-node";
import { pino, type Logger } from "pino";
import type { Registry } from "prom-client";
import { beforeDeadline } from "../foundation/deadline.js";
import { Bus, type BusOptions } from "../bus/bus.js";
import { followConnection } from "../observability/connection-state.js";
import type { Readiness } from "../observability/http.js";
import { sealerRegistry } from "./metrics.js";
import type { SealLag } from "./lag.js";
import { SessionHeads } from "./heads.js";
import type { SealKeyPair } from "../log/seal/keys.js";
import { SealerLease } from "./lease.js";
import { ensureSealStream } from "../log/seal/stream.js";
import { SealerSignatureCheck } from "./signature-check.js";
import { SealBatcher } from "./batcher.js";
import { sealWhileActive, type RoundOptions } from "./round.js";
import { takeTurns, type SealerControl } from "./turns.js";

export type { SealLag } from "./lag.js";

export interface SealerOptions extends BusOptions {
  nc: NatsConnection;
  /** The signing key (an nkey seed): `sealKeyFromFile`, `sealKeyFromSeed`. */
  key: SealKeyPair;
  id?: string;
  /** Records per batch at most (default 500). */
  maxBatch?: number;
  /** A batch is sealed at the latest this long after its first record was read (default 100). */
  maxDelayMs?: number;
  /** How long the lease lasts without renewal (default 5000); standbys take over after it. */
  leaseTtlMs?: number;
  /** Session heads kept in memory (the rest are read back from KV). Default 100 000. */
  maxCachedSessions?: number;
  /** Replicas of the seal stream and the sealer's buckets when this sealer creates them. */
  replicas?: number;
  /** Trusted coordinator keys: sealed records are checked against their signatures (signature-check.ts). */
  coordinatorKeys?: readonly string[];
  /** How long a sealed record may wait for its coordinator's signature (default 60 000 ms). */
  signatureGraceMs?: number;
  logger?: Logger;
}

export interface Sealer {
  readonly id: string;
  readonly publicKey: string;
  /** Prometheus metrics (`--http`): evidence lag, batches stored, lease held. */
  readonly metrics: Registry;
  /** For /readyz: connected to NATS and running (sealing or standing by). */
  ready(): Readiness;
  /** Evidence lag, for metrics and status (a getter: cheap, no I/O). */
  lag(): SealLag;
  /** Seal what was read, give the lease up, stop. */
  stop(): Promise<void>;
}

/**
 * How long stop() waits for the current round (a flush retrying against a server that does not
 * answer may not end on its own). Past it the lease is left to expire rather than released: a
 * successor must not start while this round could still append.
 */
const STOP_WAIT_MS = 10_000;

const DEFAULTS = { maxBatch: 500, maxDelayMs: 100, leaseTtlMs: 5000, maxCachedSessions: 100_000 };

type Settings = typeof DEFAULTS;

interface Started {
  bus: Bus;
  id: string;
  logger: Logger;
  settings: Settings;
  replicas: number;
}

interface Stores {
  lease: SealerLease;
  heads: SessionHeads;
}

async function connect(options: SealerOptions): Promise<Started> {
  const bus = await Bus.open(options.nc, options);
  const id = options.id ?? `sealer-${nuid.next().slice(-8)}`;
  const logger = (options.logger ?? pino({ level: "silent" })).child({ sealer: id });
  const settings = { ...DEFAULTS, ...stripUndefined(options) };
  return { bus, id, logger, settings, replicas: options.replicas ?? 1 };
}

/** The seal stream, the lease and the session heads (each created by the first sealer). */
async function ensureStores(options: SealerOptions, started: Started): Promise<Stores> {
  const { bus, id, settings, replicas } = started;
  await ensureSealStream(bus, replicas);
  const lease = await SealerLease.open(
    options.nc,
    bus.subjects,
    id,
    settings.leaseTtlMs,
    replicas,
    options.key,
  );
  const heads = await SessionHeads.open(
    options.nc,
    bus.subjects,
    settings.maxCachedSessions,
    replicas,
  );
  return { lease, heads };
}

/** Take turns at the lease and seal while holding it, until stopped. */
function run(
  options: SealerOptions,
  { bus, id, logger, settings }: Started,
  { lease, heads }: Stores,
  signatures: SealerSignatureCheck | undefined,
  control: SealerControl,
): { batcher: SealBatcher; running: Promise<void> } {
  const stopping = () => control.stopped;
  const batcher = new SealBatcher({
    bus,
    key: options.key,
    lease,
    logger,
    stopping,
    id,
    heads,
    signatures,
    maxBatch: settings.maxBatch,
    maxBatchBytes: Math.floor((options.nc.info?.max_payload ?? 1024 * 1024) * 0.9),
  });
  const round: RoundOptions = {
    bus,
    lease,
    heads,
    batcher,
    logger,
    stopping,
    maxBatch: settings.maxBatch,
    maxDelayMs: settings.maxDelayMs,
    leaseTtlMs: settings.leaseTtlMs,
    onStoppable: (stop) => (control.stopCurrent = stop),
  };
  const running = takeTurns({
    control,
    lease,
    leaseTtlMs: settings.leaseTtlMs,
    logger,
    seal: () => sealWhileActive(round),
  });
  return { batcher, running };
}

/** End the current round, give the lease up (when the round ended in time) and stop. */
async function drain(
  control: SealerControl,
  running: Promise<void>,
  lease: SealerLease,
  signatures: SealerSignatureCheck | undefined,
  logger: Logger,
): Promise<void> {
  control.stopped = true;
  control.wake?.();
  control.stopCurrent?.();
  const ended = await beforeDeadline(
    running,
    Date.now() + STOP_WAIT_MS,
    "HOOKBUS_LOG_UNAVAILABLE",
    () => `the sealer's current round did not end within ${STOP_WAIT_MS} ms`,
  ).then(
    () => true,
    (error: unknown) => {
      logger.warn({ err: error }, "stopping without releasing the lease (it expires)");
      return false;
    },
  );
  if (ended) {
    // Best effort: a lease not released runs out, and a standby takes over a time-to-live later.
    await lease.release().catch((error: unknown) => {
      logger.warn({ err: error }, "could not release the lease on stop (it expires)");
    });
  }
  await signatures?.stop();
  control.active = false;
  logger.info("sealer stopped");
}

export async function startSealer(options: SealerOptions): Promise<Sealer> {
  const started = await connect(options);
  const stores = await ensureStores(options, started);
  const { bus, id, logger } = started;
  const signatures = SealerSignatureCheck.start(bus, options, logger);
  const control: SealerControl = { stopped: false, active: false };
  const { batcher, running } = run(options, started, stores, signatures, control);
  logger.info({ publicKey: options.key.publicKey }, "sealer started");

  let stopping: Promise<void> | undefined;
  const connection = followConnection(options.nc);
  const lag = () => batcher.lag(control.active && stores.lease.held());
  const metrics = sealerRegistry(bus, id, lag);
  signatures?.register(metrics);
  return {
    id,
    publicKey: options.key.publicKey,
    metrics,
    ready() {
      const reasons: string[] = [];
      if (!connection.connected()) reasons.push("not connected to NATS");
      if (control.stopped) reasons.push("stopping");
      return { ready: reasons.length === 0, reasons };
    },
    lag,
    stop: () => (stopping ??= drain(control, running, stores.lease, signatures, logger)),
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
