/**
 * The two hashes of tamper evidence (docs/tamper-evidence.md), over bytes exactly as stored:
 *
 * - a session's chain: `h = sha256(prev ‖ u32be(len(subject)) ‖ subject ‖ data)`, where `prev` is
 *   the previous record's `h` of the same session (32 zero bytes for its first record), `subject`
 *   the record's log subject (UTF-8) and `data` the message body as the log stores it. Nothing is
 *   re-serialised, so any byte changed in a record, or its move to another subject, changes `h`.
 * - a seal batch's hash: `sha256(data)` of the batch message as the seal stream stores it.
 */
import { createHash } from "node:crypto";

export const ZERO_HASH = "0".repeat(64);

export function chainHash(prev: string | null, subject: string, data: Uint8Array): string {
  const subjectBytes = Buffer.from(subject, "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(subjectBytes.length);
  return createHash("sha256")
    .update(Buffer.from(prev ?? ZERO_HASH, "hex"))
    .update(length)
    .update(subjectBytes)
    .update(data)
    .digest("hex");
}

export function bytesHash(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
