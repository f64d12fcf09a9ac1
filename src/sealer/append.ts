/**
 * Appending one signed seal batch, fenced on the seal stream's last sequence
 * (`Nats-Expected-Last-Sequence`): retried until it is stored, or refused because the lease was
 * lost or someone else appended first (HOOKBUS_SEAL_CONFLICT: this sealer stands down).
 */
import { headers as natsHeaders } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { Bus } from "../bus/bus.js";
import { isWrongLastSequence } from "../bus/streams.js";
import { backoffMs } from "../foundation/backoff.js";
import { HookbusError } from "../foundation/errors.js";
import { sleep } from "../foundation/time.js";
import { SignatureHeader, SignerHeader, sealSubject } from "../log/seal/batch.js";
import { bytesHash } from "../log/seal/hash.js";
import type { SealKeyPair } from "../log/seal/keys.js";
import { lastBatch } from "../log/seal/stream.js";
import type { SealerLease } from "./lease.js";

export interface AppendTarget {
  bus: Bus;
  key: SealKeyPair;
  lease: SealerLease;
  logger: Logger;
  /** Whether the sealer is stopping (a failed append is then not retried). */
  stopping(): boolean;
}

/** Append `data` after the seal stream's sequence `from.streamSeq`; resolves with its own sequence. */
export async function appendBatch(
  target: AppendTarget,
  data: Uint8Array,
  from: { streamSeq: number },
): Promise<number> {
  const { bus, key, lease, logger } = target;
  const hdrs = natsHeaders();
  hdrs.set(SignatureHeader, key.sign(data));
  hdrs.set(SignerHeader, key.publicKey);
  const hash = bytesHash(data);
  const subject = sealSubject(bus.subjects);
  for (let attempt = 0; ; attempt++) {
    if (!lease.held()) {
      throw new HookbusError("HOOKBUS_SEAL_CONFLICT", "the sealer lease was lost");
    }
    if (target.stopping() && attempt > 0) {
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
      const stored = await storedAnyway(target, hash, from.streamSeq, error);
      if (stored !== undefined) return stored;
      logger.warn({ err: error, attempt }, "seal append failed, retrying");
      await sleep(backoffMs(attempt, { firstMs: 50, capMs: 1000 }));
    }
  }
}

/**
 * After a failed append: did an earlier attempt get through (its answer lost; resolves with its
 * sequence), or did someone else append (throws HOOKBUS_SEAL_CONFLICT)? Undefined: retry.
 * When the seal stream cannot be read either, nothing is concluded (not even from a refused
 * expectation, which an earlier attempt of this sealer may have caused): the append is retried,
 * still fenced on the same sequence, and the next failure reads again.
 */
async function storedAnyway(
  target: AppendTarget,
  hash: string,
  expected: number,
  error: unknown,
): Promise<number | undefined> {
  let last;
  try {
    last = await lastBatch(target.bus);
  } catch (readError) {
    target.logger.warn(
      { err: readError, appendErr: error },
      "seal append failed and the seal stream's last batch could not be read; retrying the append (check NATS/JetStream health)",
    );
    return undefined;
  }
  if (last !== undefined && last.hash === hash) return last.streamSeq;
  if (last !== undefined && last.streamSeq !== expected) {
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
  return undefined;
}
