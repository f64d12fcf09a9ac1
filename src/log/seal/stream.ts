/**
 * The seal stream `<NS>_SEALS`: signed seal batches, one subject, append-only (no deletes or
 * purges through the API). Appends carry `Nats-Expected-Last-Sequence`, so two sealers can never
 * fork it: whoever appends second with the same expectation is refused.
 */
import type { Bus } from "../../bus/bus.js";
import { ensureAppendOnlyStream } from "../append-only-stream.js";
import { bytesHash } from "./hash.js";
import { SealBatch, SignatureHeader, SignerHeader, sealStreamName, sealSubject } from "./batch.js";
import { isStreamNotFound } from "../../bus/streams.js";

export async function ensureSealStream(bus: Bus, replicas = 1): Promise<void> {
  await ensureAppendOnlyStream(bus, {
    name: sealStreamName(bus.subjects),
    subject: sealSubject(bus.subjects),
    description: "hookbus seal batches: signed hash chains over the log",
    replicas,
  });
}

/** A batch as stored: its exact bytes, their hash, the parsed body (when it parses), its signature. */
export interface StoredBatch {
  /** Sequence in the seal stream. */
  streamSeq: number;
  data: Uint8Array;
  hash: string;
  batch: SealBatch | undefined;
  /** Why the body is not a batch, when it is not. */
  invalid?: string;
  signature: string | undefined;
  signer: string | undefined;
  storedAt: Date;
}

export function toStoredBatch(
  streamSeq: number,
  data: Uint8Array,
  header: { get(name: string): string } | undefined,
  storedAt: Date,
): StoredBatch {
  let batch: SealBatch | undefined;
  let invalid: string | undefined;
  try {
    const parsed = SealBatch.safeParse(JSON.parse(new TextDecoder().decode(data)));
    if (parsed.success) batch = parsed.data;
    else invalid = parsed.error.message;
  } catch (error) {
    invalid = String((error as Error)?.message ?? error);
  }
  const signature = header?.get(SignatureHeader) || undefined;
  const signer = header?.get(SignerHeader) || undefined;
  return {
    streamSeq,
    data,
    hash: bytesHash(data),
    batch,
    ...(invalid === undefined ? {} : { invalid }),
    signature,
    signer,
    storedAt,
  };
}

/** The newest batch of the seal stream (undefined: none yet, or no seal stream). */
export async function lastBatch(bus: Bus): Promise<StoredBatch | undefined> {
  const name = sealStreamName(bus.subjects);
  let info;
  try {
    info = await bus.jsm.streams.info(name);
  } catch (error) {
    if (isStreamNotFound(error)) return undefined;
    throw error;
  }
  if (info.state.messages === 0) return undefined;
  const msg = await bus.jsm.streams.getMessage(name, { seq: info.state.last_seq });
  if (msg === null) return undefined;
  return toStoredBatch(msg.seq, msg.data, msg.header, msg.time);
}
