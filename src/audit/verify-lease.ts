/**
 * The sealer lease in `audit verify` (issues 21 and 31): whoever holds the lease decides whether
 * the log gets sealed, so the lease's last writer must be a trusted sealer. Sealers name their
 * public key in the lease and sign it (src/sealer/lease.ts, value format in
 * src/log/seal/lease-value.ts); checked only against trusted keys (`--key`), since a
 * self-declared key proves nothing.
 *
 * The bucket keeps one value (history 1), so this sees the last write only:
 * - a value not signed by a trusted sealer is a finding, live or not: held now, it can stop
 *   sealing; expired or released, someone else held the lease last (and may have stopped sealing
 *   to remove a record: issue 31), and no trusted sealer has taken it since;
 * - on a sealed log, a lease deleted, purged, unreadable or gone with its bucket is a finding: no
 *   hookbus process deletes it (a sealer releases by writing `until: 0`, signed).
 * Earlier writes are overwritten; a removal they covered is the signature check's to name
 * (`signed-record-missing`, `signed-twice`) and the `stalled` findings'.
 */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { Bus } from "../bus/bus.js";
import { isStreamNotFound } from "../bus/streams.js";
import { verifySignature } from "../log/seal/keys.js";
import {
  leaseBucketName,
  leaseClaimBytes,
  parseLease,
  type LeaseValue,
} from "../log/seal/lease-value.js";
import type { VerifyFinding } from "./verify-analyse.js";

/** The lease key's last entry as stored. */
type LeaseEntry =
  | { state: "absent"; what: string }
  | { state: "removed"; operation: string }
  | { state: "unreadable" }
  | { state: "value"; value: LeaseValue };

export async function checkSealerLease(
  bus: Bus,
  trustedKeys: readonly string[],
  options: { sealed: boolean; now?: number },
): Promise<VerifyFinding[]> {
  if (trustedKeys.length === 0) return [];
  const now = options.now ?? Date.now();
  const where = `bucket ${leaseBucketName(bus.subjects)}, key lease`;
  const entry = await readLeaseEntry(bus);
  if (entry.state !== "value") {
    if (!options.sealed) return []; // no sealer ever sealed: nothing for a lease to have guarded
    return [{ kind: "lease", reason: "lease-removed", message: removedMessage(entry, where) }];
  }
  const lease = entry.value;
  const problem = leaseProblem(lease, bus.subjects.namespace, trustedKeys);
  if (problem === undefined) return [];
  const holder = JSON.stringify(lease.holder);
  const message =
    lease.until > now
      ? `the sealer lease is held by ${holder} for ${Math.ceil((lease.until - now) / 1000)} s more, ${problem.what}: whoever holds it can stop sealing (${where})`
      : `the sealer lease was last written by ${holder}, ${problem.what}, and no trusted sealer has taken it since (${lease.until === 0 ? "released" : `expired ${new Date(lease.until).toISOString()}`}): whoever held it could stop sealing meanwhile (${where})`;
  return [{ kind: "lease", reason: problem.reason, message }];
}

function removedMessage(entry: Exclude<LeaseEntry, { state: "value" }>, where: string): string {
  const how =
    entry.state === "absent"
      ? entry.what
      : entry.state === "removed"
        ? `its last entry is a ${entry.operation} marker`
        : "its value is not a lease";
  return `the log is sealed, but the sealer lease is gone: ${how} (${where}); no hookbus process deletes it, so someone rewrote the lease bucket`;
}

async function readLeaseEntry(bus: Bus): Promise<LeaseEntry> {
  const bucket = leaseBucketName(bus.subjects);
  let msg;
  try {
    msg = await bus.jsm.streams.getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.lease` });
  } catch (error) {
    if (isStreamNotFound(error)) return { state: "absent", what: "its bucket does not exist" };
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound)
      return { state: "absent", what: "the bucket holds no lease key" };
    throw error;
  }
  if (msg === null) return { state: "absent", what: "the bucket holds no lease key" };
  const operation = msg.header?.get("KV-Operation");
  if (operation === "DEL" || operation === "PURGE") return { state: "removed", operation };
  const value = parseLease(new TextDecoder().decode(msg.data));
  return value === undefined ? { state: "unreadable" } : { state: "value", value };
}

function leaseProblem(
  lease: LeaseValue,
  namespace: string,
  trustedKeys: readonly string[],
): { reason: string; what: string } | undefined {
  if (lease.key === undefined)
    return {
      reason: "unkeyed-lease",
      what: "naming no sealer key (a sealer older than keyed leases, or not a sealer)",
    };
  if (!trustedKeys.includes(lease.key))
    return { reason: "untrusted-key", what: `with key ${lease.key}, not a trusted sealer key` };
  const claim = leaseClaimBytes(namespace, lease.holder, lease.until);
  if (lease.sig === undefined || !verifySignature(lease.key, claim, lease.sig))
    return {
      reason: "bad-signature",
      what: `naming trusted key ${lease.key} without its valid signature`,
    };
  return undefined;
}
