/**
 * Session state in a JetStream KV bucket (`<ns>_state`), so it is shared by every worker of a
 * policy and survives restarts. `update` is a compare-and-set loop: read the key and its
 * revision, compute the new value, write it only if the revision is unchanged (`kv.create` when
 * there is no live entry, `kv.update(key, value, revision)` otherwise); a lost race is retried
 * after a jittered backoff, and after `maxAttempts` lost races the update fails with
 * HOOKBUS_STATE_CONFLICT instead of silently dropping the write.
 *
 * Keys are `<policy>.<encodeToken(sessionKey)>.<encodeToken(key)>`: any session key or state key
 * is safe, and one policy's keys never collide with another's.
 */
import { JetStreamApiCodes, JetStreamApiError, jetstream } from "@nats-io/jetstream";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../../bus/bus.js";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { defaultReplicas } from "../../bus/streams.js";
import { DEFAULT_NAMESPACE, Subjects } from "../../bus/subjects.js";
import { encodeToken, POLICY_NAME_PATTERN } from "../../bus/tokens.js";
import { HookbusError } from "../../foundation/errors.js";
import { sleep } from "../../foundation/time.js";
import { beforeDeadline } from "../../foundation/deadline.js";
import { backoffMs } from "../../foundation/backoff.js";
import {
  parseStateValue,
  serializeStateValue,
  type SessionStateStore,
  type StateAddress,
} from "./session-state.js";

/**
 * 30 days after its last write a key expires (the bucket's max_age). Long, because expiry of a
 * security flag ("this session is tainted") re-opens what it closed; finite, because sessions
 * are never formally closed and the bucket must not grow forever. 0 keeps keys forever.
 */
export const DEFAULT_STATE_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Enough for dozens of workers hammering one key; the waits are full-jitter backoff. */
export const DEFAULT_STATE_MAX_ATTEMPTS = 12;
export const DEFAULT_STATE_RETRY_BASE_MS = 2;
export const DEFAULT_STATE_RETRY_MAX_MS = 250;

export interface KvSessionStateOptions {
  /** The hookbus namespace; the bucket is `bus.subjects.stateBucket` of it. Default `hookbus`. */
  namespace?: string;
  /**
   * How long a key lives after its last write, in ms (the bucket's max_age); 0 = forever.
   * Applied only when this store creates the bucket: an existing bucket is used as it is.
   */
  ttlMs?: number;
  /** Compare-and-set attempts of one `update` before HOOKBUS_STATE_CONFLICT. */
  maxAttempts?: number;
  /** Backoff after the first lost race (ms); it doubles per attempt up to `retryMaxMs`. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Bucket replicas when this store creates it (clustered JetStream). Default HOOKBUS_REPLICAS or 1. */
  replicas?: number;
  logger?: Logger;
}

export class KvSessionStateStore implements SessionStateStore {
  readonly bucketName: string;
  private readonly ttlMs: number;
  private readonly maxAttempts: number;
  private readonly backoff: { firstMs: number; capMs: number };
  private bucket: Promise<KV> | undefined;

  constructor(
    private readonly nc: NatsConnection,
    private readonly options: KvSessionStateOptions = {},
  ) {
    this.bucketName = new Subjects(options.namespace ?? DEFAULT_NAMESPACE).stateBucket;
    this.ttlMs = options.ttlMs ?? DEFAULT_STATE_TTL_MS;
    this.maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_STATE_MAX_ATTEMPTS);
    this.backoff = {
      firstMs: options.retryBaseMs ?? DEFAULT_STATE_RETRY_BASE_MS,
      capMs: options.retryMaxMs ?? DEFAULT_STATE_RETRY_MAX_MS,
    };
  }

  /** A store whose bucket is already open (creation errors surface here, not on first use). */
  static async open(
    nc: NatsConnection,
    options: KvSessionStateOptions = {},
  ): Promise<KvSessionStateStore> {
    const store = new KvSessionStateStore(nc, options);
    await store.kv();
    return store;
  }

  async get(address: StateAddress): Promise<unknown> {
    const kv = await within(this.kv(), address, "opening the bucket");
    const entry = await within(kv.get(kvKey(address)), address, "a read");
    return entry === null || entry.operation !== "PUT"
      ? undefined
      : parseStateValue(entry.string());
  }

  async set(address: StateAddress, value: unknown): Promise<void> {
    const json = serializeStateValue(address, value);
    const kv = await within(this.kv(), address, "opening the bucket");
    await within(kv.put(kvKey(address), json), address, "a write");
  }

  async update(address: StateAddress, fn: (previous: unknown) => unknown): Promise<unknown> {
    const kv = await within(this.kv(), address, "opening the bucket");
    const key = kvKey(address);
    for (let attempt = 1; ; attempt++) {
      const entry = await within(kv.get(key), address, "a read");
      const live = entry !== null && entry.operation === "PUT";
      const json = serializeStateValue(
        address,
        fn(live ? parseStateValue(entry.string()) : undefined),
      );
      try {
        // A delete leaves a marker with a revision: updating against it is still a CAS.
        await within(
          entry === null ? kv.create(key, json) : kv.update(key, json, entry.revision),
          address,
          "a compare-and-set write",
        );
        return parseStateValue(json);
      } catch (error) {
        if (!isLostRace(error)) throw error;
      }
      if (attempt >= this.maxAttempts) {
        throw new HookbusError(
          "HOOKBUS_STATE_CONFLICT",
          `state "${address.key}" of policy "${address.policy}" changed under ${attempt} attempts to update it`,
          { policy: address.policy, key: address.key, attempts: attempt },
        );
      }
      // Full jitter: workers that lost the same race must not come back at the same instant.
      const pause = backoffMs(attempt - 1, { ...this.backoff, jitter: "full" });
      if (address.deadline !== undefined && Date.now() + pause >= address.deadline) {
        throw expired(address, "a compare-and-set retry");
      }
      await sleep(pause);
    }
  }

  async delete(address: StateAddress): Promise<void> {
    const kv = await within(this.kv(), address, "opening the bucket");
    await within(kv.delete(kvKey(address)), address, "a delete");
  }

  /** Opens (creating if missing) the bucket once; a failed open is retried on the next use. */
  private kv(): Promise<KV> {
    const create = () =>
      new Kvm(jetstream(this.nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(this.bucketName, {
        storage: "file",
        history: 1,
        ttl: this.ttlMs,
        replicas: this.options.replicas ?? defaultReplicas(),
        description: "hookbus policy session state",
        allow_direct: KV_ALLOW_DIRECT,
      });
    // Workers starting together race to create the bucket; the loser finds it on a second look.
    this.bucket ??= create()
      .catch(create)
      .then(
        (kv) => {
          this.options.logger?.debug({ bucket: this.bucketName }, "session state bucket ready");
          return kv;
        },
        (error: unknown) => {
          this.bucket = undefined;
          throw error;
        },
      );
    return this.bucket;
  }
}

export function kvKey({ policy, sessionKey, key }: StateAddress): string {
  if (!POLICY_NAME_PATTERN.test(policy)) {
    throw new RangeError(`invalid policy name ${JSON.stringify(policy)} in a state address`);
  }
  return `${policy}.${encodeToken(sessionKey)}.${encodeToken(key)}`;
}

/** `work`, or HOOKBUS_POLICY_TIMEOUT once the caller's deadline (if any) has passed. */
function within<T>(work: Promise<T>, address: StateAddress, what: string): Promise<T> {
  if (address.deadline === undefined) return work;
  const error = expired(address, what);
  return beforeDeadline(work, address.deadline, error.code, () => error.message, error.details);
}

function expired(address: StateAddress, what: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_POLICY_TIMEOUT",
    `state "${address.key}" of policy "${address.policy}": the caller's deadline passed during ${what}`,
    { policy: address.policy, key: address.key },
  );
}

/** The server refused the write because the key's revision moved (someone else wrote first). */
function isLostRace(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    (error.code === JetStreamApiCodes.StreamWrongLastSequence ||
      error.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown)
  );
}
