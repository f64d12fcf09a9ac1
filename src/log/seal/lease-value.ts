/**
 * The sealer lease's stored value (KV bucket `<ns>_sealer`, key `lease`): what the sealer writes
 * (src/sealer/lease.ts) and what `audit verify` and `hookbus status` read, kept below both.
 */
import type { Bus } from "../../bus/bus.js";
import type { Subjects } from "../../bus/subjects.js";

export interface LeaseValue {
  holder: string;
  /** Epoch ms after which anyone may take the lease. */
  until: number;
  /** The holder's sealer public key (absent in leases of sealers before keyed leases). */
  key?: string;
  /** `key`'s signature (base64) of `leaseClaimBytes`. */
  sig?: string;
}

/** What a keyed lease's signature covers: the namespace too, so a lease cannot be replayed elsewhere. */
export function leaseClaimBytes(namespace: string, holder: string, until: number): Uint8Array {
  return new TextEncoder().encode(`hookbus-sealer-lease\n${namespace}\n${holder}\n${until}`);
}

export function leaseBucketName(subjects: Subjects): string {
  return `${subjects.namespace}_sealer`;
}

/** A lease value as stored; undefined when it is not one (anyone may then take the lease). */
export function parseLease(text: string): LeaseValue | undefined {
  try {
    const v = JSON.parse(text) as Partial<LeaseValue>;
    if (typeof v.holder !== "string" || typeof v.until !== "number") return undefined;
    return {
      holder: v.holder,
      until: v.until,
      ...(typeof v.key === "string" ? { key: v.key } : {}),
      ...(typeof v.sig === "string" ? { sig: v.sig } : {}),
    };
  } catch {
    return undefined;
  }
}

/** The lease value stored now (read directly, no watcher); undefined when none or unreadable. */
export async function readLease(bus: Bus): Promise<LeaseValue | undefined> {
  const bucket = leaseBucketName(bus.subjects);
  const msg = await bus.jsm.streams
    .getMessage(`KV_${bucket}`, { last_by_subj: `$KV.${bucket}.lease` })
    .catch((error: unknown) => {
      // No bucket (no sealer ever ran) or no lease key: no lease, not an error.
      if (/not found|no message/i.test(String(error))) return null;
      throw error;
    });
  if (msg === null || msg.data.length === 0) return undefined;
  return parseLease(new TextDecoder().decode(msg.data));
}
