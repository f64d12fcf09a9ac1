/**
 * One active sealer: a lease in KV (`<ns>_sealer`, key `lease`) taken and renewed with
 * compare-and-set on the key's revision, so two sealers never both believe they hold it for long.
 * The seal stream's `Nats-Expected-Last-Sequence` is the hard fence: a sealer that lost its lease
 * without noticing still cannot append after someone else.
 *
 * The value also names the holder's sealer public key and carries its signature over holder,
 * until and namespace (`leaseClaimBytes`), so `audit verify --key` can tell a lease held by a
 * trusted sealer from one written by whoever can write the bucket (lease-check in
 * src/audit/verify-lease.ts). Values without a key (sealers before this) stay readable.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS, type Bus } from "../bus/bus.js";
import type { Subjects } from "../bus/subjects.js";
import type { SealKeyPair } from "../log/seal/keys.js";

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

export class SealerLease {
  private revision = 0;
  private until = 0;

  private constructor(
    private readonly kv: KV,
    readonly holder: string,
    private readonly ttlMs: number,
    private readonly namespace: string,
    private readonly key: SealKeyPair | undefined,
  ) {}

  /** `key`: the sealer's signing key, named and signing in the lease value (omit: an unkeyed lease). */
  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    holder: string,
    ttlMs: number,
    replicas = 1,
    key?: SealKeyPair,
  ): Promise<SealerLease> {
    const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
      leaseBucketName(subjects),
      { history: 1, storage: "file", allow_direct: KV_ALLOW_DIRECT, replicas },
    );
    return new SealerLease(kv, holder, ttlMs, subjects.namespace, key);
  }

  /** The lease value for `until`, keyed and signed when this sealer has a key. */
  private value(until: number): LeaseValue {
    const value: LeaseValue = { holder: this.holder, until };
    if (this.key === undefined) return value;
    const sig = this.key.sign(leaseClaimBytes(this.namespace, this.holder, until));
    return { ...value, key: this.key.publicKey, sig };
  }

  /** Whether this process holds the lease now (by its own clock, with a margin). */
  held(): boolean {
    return this.revision > 0 && Date.now() < this.until - this.ttlMs / 4;
  }

  /** Take or renew the lease; false when another holder's lease is still running. */
  async acquire(): Promise<boolean> {
    const now = Date.now();
    const value = this.value(now + this.ttlMs);
    const entry = await this.kv.get("lease");
    try {
      if (entry === null || entry.operation !== "PUT") {
        this.revision =
          entry === null
            ? await this.kv.create("lease", JSON.stringify(value))
            : await this.kv.update("lease", JSON.stringify(value), entry.revision);
      } else {
        const current = parseLease(entry.string());
        const mine = current?.holder === this.holder && entry.revision === this.revision;
        if (!mine && current !== undefined && current.until > now) {
          this.revision = 0;
          return false;
        }
        this.revision = await this.kv.update("lease", JSON.stringify(value), entry.revision);
      }
    } catch {
      // Lost the compare-and-set: someone else took or renewed it first.
      this.revision = 0;
      return false;
    }
    this.until = value.until;
    return true;
  }

  /** Give the lease up (on a clean stop), so a standby takes over at once. */
  async release(): Promise<void> {
    if (this.revision === 0) return;
    const value = this.value(0);
    await this.kv.update("lease", JSON.stringify(value), this.revision).catch(() => {});
    this.revision = 0;
  }
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
