/**
 * A seal batch: for a range of log sequences, every record's place in its session's chain and a
 * hash link to the previous batch, signed by the sealer (docs/tamper-evidence.md). Batches are
 * stored in `<NS>_SEALS` on one subject, `<ns>.seals`, as JSON bytes; the signature travels in a
 * header, over those exact bytes, and a batch's hash is sha256 of them.
 */
import { z } from "zod";
import type { Subjects } from "../../bus/subjects.js";

export const SEAL_VERSION = 1;
export const SignatureHeader = "Hookbus-Seal-Signature";
export const SignerHeader = "Hookbus-Seal-Key";

const Hex = z.string().regex(/^[0-9a-f]{64}$/);

export const SealedSession = z.strictObject({
  /** `<agentToken>.<sessionToken>` of the records' subjects; "" for a subject of another shape. */
  session: z.string().max(1024),
  /** The session's head before this batch (null: its first records). */
  prev: Hex.nullable(),
  /** Records of the session sealed so far, this batch included. */
  count: z.int().min(1),
  /** `[seq, hash]` of each record of the session in this batch, in log order. */
  records: z.array(z.tuple([z.int().min(1), Hex])).min(1),
});

export const SealBatch = z
  .strictObject({
    v: z.literal(SEAL_VERSION),
    namespace: z.string(),
    index: z.int().min(1),
    /** Log sequences covered, inclusive: every record stored in this range is listed. */
    fromSeq: z.int().min(1),
    toSeq: z.int().min(1),
    /** Hash of the previous batch (null for the first). */
    prev: Hex.nullable(),
    sessions: z.array(SealedSession),
    /** When the log stored the batch's last record, and when the batch was made. */
    loggedAt: z.iso.datetime(),
    sealedAt: z.iso.datetime(),
    sealer: z.string().max(256),
  })
  .meta({ id: "SealBatch" });

export type SealBatch = z.infer<typeof SealBatch>;
export type SealedSession = z.infer<typeof SealedSession>;

export function sealStreamName(subjects: Subjects): string {
  return `${subjects.namespace.toUpperCase()}_SEALS`;
}

export function sealSubject(subjects: Subjects): string {
  return `${subjects.namespace}.seals`;
}

/** Session key (`<agentToken>.<sessionToken>`) of a log subject; "" when it has another shape. */
export function sessionOfSubject(namespace: string, subject: string): string {
  const parts = subject.split(".");
  return parts.length === 6 && parts[0] === namespace && parts[1] === "audit"
    ? `${parts[2]}.${parts[3]}`
    : "";
}
