/**
 * The lease's compare-and-set: a lost race (JetStream's wrong-last-sequence) is "someone else
 * holds it"; any other failure is thrown to the caller, which logs and retries it, instead of
 * being read as a lost race.
 */
import { JetStreamApiCodes, JetStreamApiError } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { describe, expect, it } from "vitest";
import { SealerLease } from "../../../src/sealer/lease.js";

type LeaseConstructor = new (
  kv: KV,
  holder: string,
  ttlMs: number,
  namespace: string,
  key: undefined,
) => SealerLease;

function leaseOver(create: () => Promise<number>): SealerLease {
  const kv = { get: () => Promise.resolve(null), create } as unknown as KV;
  return new (SealerLease as unknown as LeaseConstructor)(kv, "me", 10_000, "ns", undefined);
}

describe("SealerLease.acquire", () => {
  it("takes a free lease", async () => {
    const lease = leaseOver(() => Promise.resolve(3));
    expect(await lease.acquire()).toBe(true);
    expect(lease.held()).toBe(true);
  });

  it("is false when someone else wrote first", async () => {
    const lost = new JetStreamApiError({
      err_code: JetStreamApiCodes.StreamWrongLastSequence,
      code: 400,
      description: "wrong last sequence: 3",
    });
    const lease = leaseOver(() => Promise.reject(lost));
    expect(await lease.acquire()).toBe(false);
    expect(lease.held()).toBe(false);
  });

  it("throws any other failure, and no longer counts on the lease", async () => {
    const timeout = new Error("TIMEOUT");
    const lease = leaseOver(() => Promise.reject(timeout));
    await expect(lease.acquire()).rejects.toBe(timeout);
    expect(lease.held()).toBe(false);
  });
});
