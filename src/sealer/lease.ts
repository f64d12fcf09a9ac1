/**
 * One active sealer: a lease in KV (`<ns>_sealer`, key `lease`) taken and renewed with
 * compare-and-set on the key's revision, so two sealers never both believe they hold it for long.
 * The seal stream's `Nats-Expected-Last-Sequence` is the hard fence: a sealer that lost its lease
 * without noticing still cannot append after someone else.
 *
 * The value also names the holder's sealer public key and carries its signature over holder,
 * until and namespace (`leaseClaimBytes`), so `audit verify --key` can tell a lease held by a
 * trusted sealer from one written by whoever can write the bucket (src/audit/verify-lease.ts;
 * the value's format is in src/log/seal/lease-value.ts, where verify and status read it too). Values without a key (sealers before this) stay readable.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import { isWrongLastSequence } from "../bus/streams.js";
import type { Subjects } from "../bus/subjects.js";
import type { SealKeyPair } from "../log/seal/keys.js";
import {
  leaseBucketName,
  leaseClaimBytes,
  parseLease,
  type LeaseValue,
} from "../log/seal/lease-value.js";

export {
  leaseBucketName,
  leaseClaimBytes,
  readLease,
  type LeaseValue,
} from "../log/seal/lease-value.js";

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
    } catch (error) {
      // Not knowing whether this write landed, this sealer no longer counts on the lease.
      this.revision = 0;
      // Lost the compare-and-set: someone else took or renewed it first.
      if (isWrongLastSequence(error)) return false;
      // Anything else (a timeout, NATS down) is the caller's to log and retry.
      throw error;
    }
    this.until = value.until;
    return true;
  }

  /** Give the lease up (on a clean stop), so a standby takes over at once. */
  async release(): Promise<void> {
    if (this.revision === 0) return;
    const value = this.value(0);
    const revision = this.revision;
    this.revision = 0;
    // Best effort on a clean stop: if it fails, the lease simply runs out and a standby takes it
    // over a time-to-live later.
    await this.kv.update("lease", JSON.stringify(value), revision);
  }
}
