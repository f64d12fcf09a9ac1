/**
 * Signed decisions (docs/security.md): each coordinator signs what it appended to the log, in
 * micro-batches. A signature batch lists `[seq, hash]` of records this coordinator stored, where
 * `hash = sha256(u32be(len(subject)) ‖ subject ‖ data)` over the record's subject and its body
 * exactly as the log stores it; the batch's JSON bytes are signed with the coordinator's key
 * (Ed25519), the signature and key travel in headers. Batches are stored in `<NS>_SIGNATURES` on
 * `<ns>.signatures`. Each record also carries `Hookbus-Signer: <public key>`, so a verifier can
 * tell a record still waiting for its batch from one nobody signed.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import type { Bus } from "../../bus/bus.js";
import type { Subjects } from "../../bus/subjects.js";
import { ensureAppendOnlyStream } from "../append-only-stream.js";

export const SIGNATURE_VERSION = 1;
/**
 * A coordinator's signer with nothing to sign stores an empty batch this long after its last one
 * (src/coordinator/record-signer.ts); `audit verify`'s crash window is two of these
 * (src/audit/verify-crash-tail.ts).
 */
export const SIGNER_HEARTBEAT_MS = 5000;
/** On each signed record: the key whose batch will list it. */
export const RecordSignerHeader = "Hookbus-Signer";
/**
 * On each signed record: the signer's run (`epoch`), so a record left unsigned when its
 * coordinator died can be told apart by the run it claims (a crash tail, src/audit/verify-crash-tail.ts).
 */
export const RecordSignerRunHeader = "Hookbus-Signer-Run";
/** On each batch: its signature (base64) and the signing key. */
export const BatchSignatureHeader = "Hookbus-Batch-Signature";
export const BatchKeyHeader = "Hookbus-Batch-Key";

const Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const SignatureBatch = z
  .strictObject({
    v: z.literal(SIGNATURE_VERSION),
    namespace: z.string(),
    coordinator: z.string().max(256),
    /** One per log writer start; `index` counts its batches from 1, `prev` links them. */
    epoch: z.string().max(64),
    index: z.int().min(1),
    prev: Hex.nullable(),
    /**
     * `[seq, hash]` of each record this coordinator stored, in the order its appends were
     * acknowledged. Empty: a heartbeat, stored while the coordinator has nothing to sign, so a
     * verifier knows how long the run lived (its crash window).
     */
    records: z.array(z.tuple([z.int().min(1), Hex])),
    /** The run's last batch, stored on a clean stop: the run has no crash tail. */
    last: z.literal(true).optional(),
    signedAt: z.iso.datetime(),
  })
  .meta({ id: "SignatureBatch" });
export type SignatureBatch = z.infer<typeof SignatureBatch>;

export function signatureStreamName(subjects: Subjects): string {
  return `${subjects.namespace.toUpperCase()}_SIGNATURES`;
}

export function signatureSubject(subjects: Subjects): string {
  return `${subjects.namespace}.signatures`;
}

/** What a batch entry commits to: the record's subject and stored bytes (not its sequence). */
export function recordHash(subject: string, data: Uint8Array): string {
  const subjectBytes = Buffer.from(subject, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(subjectBytes.length);
  return createHash("sha256").update(length).update(subjectBytes).update(data).digest("hex");
}

/** Created by the first signing coordinator; append-only like the seal stream. */
export async function ensureSignatureStream(bus: Bus, replicas = 1): Promise<void> {
  await ensureAppendOnlyStream(bus, {
    name: signatureStreamName(bus.subjects),
    subject: signatureSubject(bus.subjects),
    description: "hookbus signature batches: each coordinator's signatures of the records it wrote",
    replicas,
  });
}

/** A batch as stored: its bytes, parsed body (when it parses), signature and key. */
export interface StoredSignatureBatch {
  streamSeq: number;
  data: Uint8Array;
  batch: SignatureBatch | undefined;
  invalid?: string;
  signature: string | undefined;
  key: string | undefined;
  /** Epoch ms when the stream stored it. */
  storedAt: number;
}

export function toStoredSignatureBatch(
  streamSeq: number,
  data: Uint8Array,
  header: { get(name: string): string } | undefined,
  storedAt: number,
): StoredSignatureBatch {
  let batch: SignatureBatch | undefined;
  let invalid: string | undefined;
  try {
    const parsed = SignatureBatch.safeParse(JSON.parse(new TextDecoder().decode(data)));
    if (parsed.success) batch = parsed.data;
    else invalid = parsed.error.message;
  } catch (error) {
    invalid = String((error as Error)?.message ?? error);
  }
  return {
    streamSeq,
    data,
    batch,
    ...(invalid === undefined ? {} : { invalid }),
    signature: header?.get(BatchSignatureHeader) || undefined,
    key: header?.get(BatchKeyHeader) || undefined,
    storedAt,
  };
}
