/**
 * One active sealer: a lease in KV (`<ns>_sealer`, key `lease`) taken and renewed with
 * compare-and-set on the key's revision, so two sealers never both believe they hold it for long.
 * The seal stream's `Nats-Expected-Last-Sequence` is the hard fence: a sealer that lost its lease
 * without noticing still cannot append after someone else.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import type { Subjects } from "../bus/subjects.js";

interface LeaseValue {
  holder: string;
  /** Epoch ms after which anyone may take the lease. */
  until: number;
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
  ) {}

  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    holder: string,
    ttlMs: number,
    replicas = 1,
  ): Promise<SealerLease> {
    const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
      leaseBucketName(subjects),
      { history: 1, storage: "file", allow_direct: KV_ALLOW_DIRECT, replicas },
    );
    return new SealerLease(kv, holder, ttlMs);
  }

  /** Whether this process holds the lease now (by its own clock, with a margin). */
  held(): boolean {
    return this.revision > 0 && Date.now() < this.until - this.ttlMs / 4;
  }

  /** Take or renew the lease; false when another holder's lease is still running. */
  async acquire(): Promise<boolean> {
    const now = Date.now();
    const value: LeaseValue = { holder: this.holder, until: now + this.ttlMs };
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
    const value: LeaseValue = { holder: this.holder, until: 0 };
    await this.kv.update("lease", JSON.stringify(value), this.revision).catch(() => {});
    this.revision = 0;
  }
}

function parseLease(text: string): LeaseValue | undefined {
  try {
    const v = JSON.parse(text) as Partial<LeaseValue>;
    return typeof v.holder === "string" && typeof v.until === "number"
      ? { holder: v.holder, until: v.until }
      : undefined;
  } catch {
    return undefined;
  }
}
