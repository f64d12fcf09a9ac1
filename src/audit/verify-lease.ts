/**
 * The sealer lease in `audit verify` (issue 21): whoever holds the lease decides whether the log
 * gets sealed, so a live lease not held by a trusted sealer is a finding. Sealers name their
 * public key in the lease and sign it (src/sealer/lease.ts, value format in src/log/seal/lease-value.ts); checked only against trusted keys
 * (`--key`), since a self-declared key proves nothing. An expired or absent lease is no finding
 * here: nobody blocks sealing, and a stop is the `stalled` finding's business.
 */
import type { Bus } from "../bus/bus.js";
import { verifySignature } from "../log/seal/keys.js";
import { leaseClaimBytes, readLease, type LeaseValue } from "../log/seal/lease-value.js";
import type { VerifyFinding } from "./verify-analyse.js";

export async function checkSealerLease(
  bus: Bus,
  trustedKeys: readonly string[],
  now = Date.now(),
): Promise<VerifyFinding[]> {
  if (trustedKeys.length === 0) return [];
  const lease = await readLease(bus);
  if (lease === undefined || lease.until <= now) return [];
  const problem = leaseProblem(lease, bus.subjects.namespace, trustedKeys);
  if (problem === undefined) return [];
  const left = Math.ceil((lease.until - now) / 1000);
  return [
    {
      kind: "lease",
      reason: problem.reason,
      message: `the sealer lease is held by ${JSON.stringify(lease.holder)} for ${left} s more, ${problem.what}: whoever holds it can stop sealing (bucket ${bus.subjects.namespace}_sealer, key lease)`,
    },
  ];
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
