/**
 * What a record keeps of a policy's verdict. A valid verdict is kept as it is (it is bounded by
 * the codec's limits and its hook's schema); one that failed validation is kept as its digest and
 * size only, so a broken or hostile worker cannot fill the log with arbitrary payloads, and the
 * record still matches its schema.
 */
import { createHash } from "node:crypto";
import type { ModifyingHookName } from "../catalog/catalog.js";
import { modifyingHooks } from "../catalog/catalog.js";
import type { VerdictDigest } from "../log/record.js";

export function digestOf(value: unknown): VerdictDigest {
  const text = JSON.stringify(value) ?? "null";
  return {
    sha256: createHash("sha256").update(text).digest("hex"),
    bytes: Buffer.byteLength(text, "utf8"),
  };
}

/** The verdict fields of a recorded outcome: `verdict` when valid, `rejectedVerdict` when not. */
export function boundedVerdict(
  status: string,
  verdict: unknown,
): { verdict?: unknown; rejectedVerdict?: VerdictDigest } {
  if (verdict === undefined) return {};
  return status === "invalid" ? { rejectedVerdict: digestOf(verdict) } : { verdict };
}

/** A late verdict is not merged, so it is validated here before it is recorded. */
export function boundedLateVerdict(
  hook: ModifyingHookName,
  verdict: unknown,
): { verdict?: unknown; rejectedVerdict?: VerdictDigest } {
  if (verdict === undefined || verdict === null) return verdict === null ? { verdict } : {};
  const valid = modifyingHooks[hook].verdict.safeParse(verdict).success;
  return valid ? { verdict } : { rejectedVerdict: digestOf(verdict) };
}
