/**
 * The sealer process role (`hookbus sealer`): reads the log in stream order and appends signed
 * seal batches to `<NS>_SEALS`, off the decision path (docs/tamper-evidence.md). Any number may
 * run; the one holding the lease seals, the others wait to take over when it expires.
 *
 * Its cursor is the seal stream itself (the last batch's `toSeq`), not a consumer's ack floor:
 * the seal stream is fenced by `Nats-Expected-Last-Sequence`, so whoever takes over resumes
 * exactly after the last batch anyone stored, and a record is never sealed twice or skipped.
 */
import { DeliverPolicy, JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import { headers as natsHeaders, nuid, type NatsConnection } from "@nats-io/transport-node";
import { pino, type Logger } from "pino";
import type { Registry } from "prom-client";
import { beforeDeadline } from "../foundation/deadline.js";
import { Bus, type BusOptions } from "../bus/bus.js";
import { HookbusError } from "../foundation/errors.js";
import { followConnection } from "../observability/connection-state.js";
import type { Readiness } from "../observability/http.js";
import { sealerRegistry } from "./metrics.js";
import type { SealLag } from "./lag.js";

export type { SealLag } from "./lag.js";
import { sleep } from "../foundation/time.js";
import { SignatureHeader, SignerHeader, sealStreamName, sealSubject } from "../log/seal/batch.js";
import { bytesHash } from "../log/seal/hash.js";
import { SessionHeads } from "./heads.js";
import { buildBatch, type PendingRecord } from "./build-batch.js";
import type { SealKeyPair } from "../log/seal/keys.js";
import { SealerLease } from "./lease.js";
import { repairHeads } from "./repair.js";
import { ensureSealStream, lastBatch } from "../log/seal/stream.js";
import { backoffMs } from "../foundation/backoff.js";
import { SealerSignatureCheck } from "./signature-check.js";

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

type Pending = PendingRecord;

interface SealState {
  /** Index and hash of the last batch (0 / null: none). */
  index: number;
  hash: string | null;
  /** The next log sequence to seal. */
  nextSeq: number;
  /** The seal stream's last sequence (the expectation of the next append). */
  streamSeq: number;
}

/** Silence after which an idle consumer is checked against the log (see checkStalled). */
const STALL_MS = 2000;
/**
 * How long stop() waits for the current round (a flush retrying against a server that does not
 * answer may not end on its own). Past it the lease is left to expire rather than released: a
 * successor must not start while this round could still append.
 */
const STOP_WAIT_MS = 10_000;

const DEFAULTS = { maxBatch: 500, maxDelayMs: 100, leaseTtlMs: 5000, maxCachedSessions: 100_000 };

export async function startSealer(options: SealerOptions): Promise<Sealer> {
  const bus = await Bus.open(options.nc, options);
  const id = options.id ?? `sealer-${nuid.next().slice(-8)}`;
  const logger = (options.logger ?? pino({ level: "silent" })).child({ sealer: id });
  const settings = { ...DEFAULTS, ...stripUndefined(options) };
  const replicas = options.replicas ?? 1;
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
  const signatures = SealerSignatureCheck.start(bus, options, logger);
  const subject = sealSubject(bus.subjects);
  const encoder = new TextEncoder();
  const maxBatchBytes = Math.floor((options.nc.info?.max_payload ?? 1024 * 1024) * 0.9);

  let stopped = false;
  let active = false;
  let state: SealState | undefined;
  const buffer: Pending[] = [];
  let lastPending = 0;
  let batches = 0;
  let stopCurrent: (() => void) | undefined;
  let wake: (() => void) | undefined;

  async function loadState(): Promise<SealState> {
    // Another sealer may have sealed since this one last did: nothing cached stands.
    heads.forget();
    const last = await lastBatch(bus);
    if (last === undefined) {
      const info = await bus.jsm.streams.info(bus.subjects.logStream).catch(() => undefined);
      const streamSeq = await bus.jsm.streams
        .info(sealStreamName(bus.subjects))
        .then((i) => i.state.last_seq);
      return { index: 0, hash: null, nextSeq: Math.max(1, info?.state.first_seq ?? 1), streamSeq };
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

  const build = (items: Pending[], from: SealState) =>
    buildBatch(items, from, { namespace: bus.subjects.namespace, heads, sealer: id });

  /** Append a batch, fenced on the seal stream's last sequence; retried until stored or refused. */
  async function append(data: Uint8Array, from: SealState): Promise<number> {
    const hdrs = natsHeaders();
    hdrs.set(SignatureHeader, options.key.sign(data));
    hdrs.set(SignerHeader, options.key.publicKey);
    const hash = bytesHash(data);
    for (let attempt = 0; ; attempt++) {
      if (!lease.held()) {
        throw new HookbusError("HOOKBUS_SEAL_CONFLICT", "the sealer lease was lost");
      }
      if (stopped && attempt > 0) {
        // Unsealed records stay in the log; the next sealer seals them from the seal stream's head.
        throw new HookbusError(
          "HOOKBUS_LOG_UNAVAILABLE",
          "the sealer stopped while a seal append failed",
        );
      }
      try {
        const ack = await bus.js.publish(subject, data, {
          headers: hdrs,
          expect: { lastSequence: from.streamSeq },
          timeout: 5000,
        });
        return ack.seq;
      } catch (error) {
        // Did an earlier attempt get through (its answer lost), or did someone else append?
        const last = await lastBatch(bus).catch(() => undefined);
        if (last !== undefined && last.hash === hash) return last.streamSeq;
        if (last !== undefined && last.streamSeq !== from.streamSeq) {
          throw new HookbusError(
            "HOOKBUS_SEAL_CONFLICT",
            `another sealer appended seal batch ${last.batch?.index ?? "?"}: standing down`,
            { streamSeq: last.streamSeq },
            error,
          );
        }
        if (isWrongLastSequence(error)) {
          throw new HookbusError("HOOKBUS_SEAL_CONFLICT", "the seal stream moved", {}, error);
        }
        logger.warn({ err: error, attempt }, "seal append failed, retrying");
        await sleep(backoffMs(attempt, { firstMs: 50, capMs: 1000 }));
      }
    }
  }

  let flushing: Promise<void> = Promise.resolve();
  /** Seal what is buffered (up to maxBatch); flushes never overlap. */
  function flush(): Promise<void> {
    const run = flushing.then(async () => {
      if (state === undefined || buffer.length === 0) return;
      let items = buffer.slice(0, settings.maxBatch);
      const t0 = Date.now();
      let { batch, heads: newHeads } = await build(items, state);
      let data = encoder.encode(JSON.stringify(batch));
      // Long session ids can make a batch outgrow one message: seal fewer records at a time.
      while (data.length > maxBatchBytes && items.length > 1) {
        items = items.slice(0, Math.ceil(items.length / 2));
        ({ batch, heads: newHeads } = await build(items, state));
        data = encoder.encode(JSON.stringify(batch));
      }
      const t1 = Date.now();
      const streamSeq = await append(data, state);
      const t2 = Date.now();
      buffer.splice(0, items.length);
      state = { index: batch.index, hash: bytesHash(data), nextSeq: batch.toSeq + 1, streamSeq };
      batches++;
      signatures?.sealed(items);
      for (const [session, head] of newHeads) heads.remember(session, head);
      // A failure here (or a kill) leaves KV behind: the next start repairs it from the stream.
      await heads.persist(newHeads, batch.index);
      logger.debug(
        {
          batch: batch.index,
          records: items.length,
          buildMs: t1 - t0,
          appendMs: t2 - t1,
          persistMs: Date.now() - t2,
        },
        "sealed",
      );
    });
    // The queue goes on after a failed flush (the caller handles the failure): a rejected link
    // would fail every later flush at once.
    flushing = run.catch(() => {});
    return run;
  }

  async function sealWhileActive(): Promise<void> {
    state = await loadState();
    buffer.length = 0;
    const consumer = await bus.js.consumers.get(bus.subjects.logStream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: state.nextSeq,
    });
    const messages = await consumer.consume({ max_messages: settings.maxBatch * 2 });
    let failure: unknown;
    // The read loop below is not trusted to end when its consumer is stopped (a consumer in the
    // middle of a reset after a NATS restart may never yield again): a failure or a stop ends
    // this round through `ended` whatever the iterator does.
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const fail = (error: unknown) => {
      failure ??= error;
      messages.stop();
      end();
    };
    stopCurrent = () => {
      messages.stop();
      end();
    };
    let lastDelivery = Date.now();
    const renew = setInterval(() => {
      lease.acquire().then(
        (held) => {
          if (!held) fail(new HookbusError("HOOKBUS_SEAL_CONFLICT", "lost the sealer lease"));
        },
        (error: unknown) => logger.warn({ err: error }, "lease renewal failed"),
      );
      if (buffer.length === 0 && Date.now() - lastDelivery > STALL_MS) void checkStalled();
    }, settings.leaseTtlMs / 4);
    // An ordered consumer may stay silent after a server restart lost it: if the log has moved
    // on while nothing arrives, start over from the seal stream.
    const checkStalled = async () => {
      const last = await bus.jsm.streams
        .info(bus.subjects.logStream)
        .then((i) => i.state.last_seq)
        .catch(() => 0);
      if (state !== undefined && last >= state.nextSeq && Date.now() - lastDelivery > STALL_MS) {
        logger.warn(
          { nextSeq: state.nextSeq, logLastSeq: last },
          "log consumer stalled, restarting",
        );
        fail(new HookbusError("HOOKBUS_LOG_UNAVAILABLE", "the sealer's log consumer stalled"));
      }
    };
    let timer: NodeJS.Timeout | undefined;
    const flushSoon = () => {
      clearTimeout(timer);
      timer = undefined;
      return flush().catch(fail);
    };
    const read = async () => {
      for await (const msg of messages) {
        if (failure !== undefined || stopped) break;
        if (state === undefined || msg.seq < state.nextSeq) continue;
        buffer.push({
          seq: msg.seq,
          subject: msg.subject,
          data: msg.data,
          storedAt: Math.floor(msg.info.timestampNanos / 1e6),
        });
        lastPending = msg.info.pending;
        lastDelivery = Date.now();
        if (buffer.length >= settings.maxBatch) await flushSoon();
        else timer ??= setTimeout(() => void flushSoon(), settings.maxDelayMs);
      }
    };
    try {
      const reading = read();
      // Left behind if `ended` wins: its failure is `failure`'s business, not an unhandled one.
      reading.catch(fail);
      await Promise.race([reading, ended]);
      clearTimeout(timer);
      if (failure === undefined) await flush().catch(fail);
    } finally {
      clearTimeout(timer);
      clearInterval(renew);
      messages.stop();
      // No flush of this round may overlap the next round's start (it reads the seal stream).
      await flushing;
      await consumer.delete().catch(() => {});
      stopCurrent = undefined;
    }
    if (failure !== undefined) {
      throw failure instanceof Error
        ? failure
        : new HookbusError("HOOKBUS_INTERNAL", "sealer failed", {}, failure);
    }
  }

  const running = (async () => {
    for (let attempt = 0; !stopped;) {
      try {
        active = await lease.acquire();
        if (!active) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, settings.leaseTtlMs / 4).unref();
          });
          continue;
        }
        logger.info("sealer active");
        await sealWhileActive();
        attempt = 0;
      } catch (error) {
        active = false;
        const conflict = error instanceof HookbusError && error.code === "HOOKBUS_SEAL_CONFLICT";
        logger[conflict ? "info" : "error"]({ err: error }, "sealer standing by");
        await sleep(
          conflict ? settings.leaseTtlMs / 4 : backoffMs(attempt++, { firstMs: 100, capMs: 5000 }),
        );
      }
    }
  })();
  logger.info({ publicKey: options.key.publicKey }, "sealer started");

  let stopping: Promise<void> | undefined;
  const connection = followConnection(options.nc);
  const metrics = sealerRegistry(bus, id, () => sealer.lag());
  signatures?.register(metrics);
  const sealer: Sealer = {
    id,
    publicKey: options.key.publicKey,
    metrics,
    ready() {
      const reasons: string[] = [];
      if (!connection.connected()) reasons.push("not connected to NATS");
      if (stopped) reasons.push("stopping");
      return { ready: reasons.length === 0, reasons };
    },
    lag() {
      const oldest = buffer[0];
      return {
        records: buffer.length + lastPending,
        seconds: oldest === undefined ? 0 : Math.max(0, (Date.now() - oldest.storedAt) / 1000),
        sealedSeq: state === undefined ? 0 : state.nextSeq - 1,
        batches,
        active: active && lease.held(),
      };
    },
    stop() {
      stopping ??= (async () => {
        stopped = true;
        wake?.();
        stopCurrent?.();
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
        if (ended) await lease.release();
        await signatures?.stop();
        active = false;
        logger.info("sealer stopped");
      })();
      return stopping;
    },
  };
  return sealer;
}

function isWrongLastSequence(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
