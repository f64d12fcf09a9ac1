/**
 * The data keys of a namespace: one per subject, in a KV bucket of their own
 * (`<ns>_privacy_keys`, history 1), each wrapped with the KEK (AES-256-GCM, the key name and
 * generation as authenticated data, so a wrapped key moved to another subject does not unwrap).
 * Keys are named `k.<sha256 of the subject>`: the bucket never holds a subject id.
 *
 * Erasing purges the key: the KV stream keeps a purge marker and no earlier value, so the wrapped
 * key is gone from the server, not only hidden behind a delete marker. A later record of the same
 * subject gets a new generation (`kid`); records of the erased one stay unreadable.
 *
 * Memory is bounded: at most `cacheSize` unwrapped keys, each trusted for `cacheMs` (so a key
 * erased elsewhere is used for new records at most that long by a coordinator that cached it).
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { jetstream } from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { KV_ALLOW_DIRECT, KV_REQUEST_TIMEOUT_MS } from "../bus/bus.js";
import type { Subjects } from "../bus/subjects.js";
import { HookbusError } from "../foundation/errors.js";
import type { KeyEncryptionKey } from "./kek.js";
import type { DataKey } from "./record-cipher.js";

export function keysBucketName(subjects: Subjects): string {
  return `${subjects.namespace}_privacy_keys`;
}

export const keyName = (subjectHash: string) => `k.${subjectHash}`;

interface Wrapped extends KeyOrigin {
  kid: string;
  iv: string;
  tag: string;
  key: string;
}

/**
 * What a key was made for, kept in clear beside it so that retention (run by the privacy role,
 * which holds no KEK) can pick the rule: the agent whose record made it, and whether the subject
 * is a session or a user id. Neither is personal (both are clear fields of every record).
 */
export interface KeyOrigin {
  agent?: string;
  target?: "session" | "subject";
}

export interface DataKeyStoreOptions {
  replicas?: number;
  cacheSize?: number;
  cacheMs?: number;
}

export class DataKeyStore {
  private readonly cache = new Map<string, { key: DataKey; until: number }>();
  private readonly cacheSize: number;
  private readonly cacheMs: number;

  private constructor(
    readonly kv: KV,
    private readonly kek: KeyEncryptionKey,
    options: DataKeyStoreOptions,
  ) {
    this.cacheSize = Math.max(1, options.cacheSize ?? 10_000);
    this.cacheMs = options.cacheMs ?? 30_000;
  }

  static async open(
    nc: NatsConnection,
    subjects: Subjects,
    kek: KeyEncryptionKey,
    options: DataKeyStoreOptions = {},
  ): Promise<DataKeyStore> {
    const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).create(
      keysBucketName(subjects),
      {
        history: 1,
        storage: "file",
        allow_direct: KV_ALLOW_DIRECT,
        replicas: options.replicas ?? 1,
      },
    );
    return new DataKeyStore(kv, kek, options);
  }

  /** The subject's key when this store holds it unexpired: no request, no promise (the hot path). */
  cachedKey(subjectHash: string): DataKey | undefined {
    return this.cached(subjectHash);
  }

  /** The subject's current key, made (and stored, with `origin`) when it has none. */
  async current(subjectHash: string, origin: KeyOrigin = {}): Promise<DataKey> {
    const cached = this.cached(subjectHash);
    if (cached !== undefined) return cached;
    const existing = await this.read(subjectHash);
    if (existing !== undefined) return this.remember(subjectHash, existing);
    const made: DataKey = { kid: randomBytes(8).toString("hex"), key: randomBytes(32) };
    try {
      const stored = { ...origin, ...this.wrap(subjectHash, made) };
      await this.kv.create(keyName(subjectHash), JSON.stringify(stored));
      return this.remember(subjectHash, made);
    } catch (error) {
      // Another coordinator made it first: its key is the subject's.
      const theirs = await this.read(subjectHash);
      if (theirs !== undefined) return this.remember(subjectHash, theirs);
      throw new HookbusError(
        "HOOKBUS_PRIVACY_KEY_UNAVAILABLE",
        `the data key of a subject could not be stored: ${(error as Error).message}`,
        { subject: subjectHash },
        error,
      );
    }
  }

  /** The subject's key, or undefined once erased (never made). */
  async find(subjectHash: string): Promise<DataKey | undefined> {
    return this.cached(subjectHash) ?? (await this.read(subjectHash));
  }

  /**
   * The subject's key as the bucket holds it now, past the cache: what opens a value a person is
   * about to read (an approval), which must read "[erased]" as soon as the key is gone.
   */
  async findStored(subjectHash: string): Promise<DataKey | undefined> {
    const stored = await this.read(subjectHash);
    if (stored === undefined) this.cache.delete(subjectHash);
    return stored;
  }

  /** The subject's current key read past the cache (made when it has none): see findStored. */
  async currentStored(subjectHash: string, origin: KeyOrigin = {}): Promise<DataKey> {
    this.cache.delete(subjectHash);
    return this.current(subjectHash, origin);
  }

  /** Purge the subject's key (value and history); true when there was one. */
  async erase(subjectHash: string): Promise<boolean> {
    this.cache.delete(subjectHash);
    const had = (await this.kv.get(keyName(subjectHash)))?.operation === "PUT";
    await this.kv.purge(keyName(subjectHash));
    return had;
  }

  private cached(subjectHash: string): DataKey | undefined {
    const hit = this.cache.get(subjectHash);
    if (hit === undefined) return undefined;
    if (hit.until < Date.now()) {
      this.cache.delete(subjectHash);
      return undefined;
    }
    return hit.key;
  }

  private remember(subjectHash: string, key: DataKey): DataKey {
    this.cache.delete(subjectHash);
    this.cache.set(subjectHash, { key, until: Date.now() + this.cacheMs });
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return key;
  }

  private async read(subjectHash: string): Promise<DataKey | undefined> {
    let entry;
    try {
      entry = await this.kv.get(keyName(subjectHash));
    } catch (error) {
      throw new HookbusError(
        "HOOKBUS_PRIVACY_KEY_UNAVAILABLE",
        `the data key of a subject could not be read: ${(error as Error).message}`,
        { subject: subjectHash },
        error,
      );
    }
    if (entry === null || entry.operation !== "PUT") return undefined;
    return this.unwrap(subjectHash, entry.string());
  }

  private wrap(subjectHash: string, key: DataKey): Wrapped {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.kek.bytes, iv);
    cipher.setAAD(Buffer.from(`${keyName(subjectHash)}\0${key.kid}`, "utf8"));
    const wrapped = Buffer.concat([cipher.update(key.key), cipher.final()]);
    return {
      kid: key.kid,
      iv: iv.toString("base64"),
      tag: cipher.getAuthTag().toString("base64"),
      key: wrapped.toString("base64"),
    };
  }

  private unwrap(subjectHash: string, text: string): DataKey {
    try {
      const w = JSON.parse(text) as Wrapped;
      const decipher = createDecipheriv("aes-256-gcm", this.kek.bytes, Buffer.from(w.iv, "base64"));
      decipher.setAAD(Buffer.from(`${keyName(subjectHash)}\0${w.kid}`, "utf8"));
      decipher.setAuthTag(Buffer.from(w.tag, "base64"));
      const key = Buffer.concat([decipher.update(Buffer.from(w.key, "base64")), decipher.final()]);
      return { kid: w.kid, key };
    } catch (error) {
      throw new HookbusError(
        "HOOKBUS_PRIVACY_KEK_INVALID",
        "a data key does not unwrap with this key-encryption key (another namespace's KEK, or a tampered key)",
        { subject: subjectHash },
        error,
      );
    }
  }
}

/**
 * Erase a subject's data key without the KEK (what the privacy role does): the stored value is
 * first deleted with JetStream's secure erase (its bytes overwritten in the store file), then the
 * key is purged (a purge marker, and no earlier value, is what the KV stream keeps). True when
 * there was a key to erase.
 */
export async function purgeDataKey(
  nc: NatsConnection,
  subjects: Subjects,
  subjectHash: string,
  onlyRevision?: number,
): Promise<boolean> {
  const js = jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS });
  const kv = await new Kvm(js).open(keysBucketName(subjects));
  const name = keyName(subjectHash);
  const entry = await kv.get(name);
  // Retention erases the key it judged, never a newer generation made since.
  if (onlyRevision !== undefined && entry?.revision !== onlyRevision) return false;
  const had = entry !== null && entry.operation === "PUT";
  if (had) {
    const jsm = await js.jetstreamManager();
    await jsm.streams.deleteMessage(`KV_${keysBucketName(subjects)}`, entry.revision, true);
  }
  await kv.purge(name);
  return had;
}

/** A stored data key as retention sees it: no key material is read or unwrapped. */
export interface StoredKeyInfo extends KeyOrigin {
  subjectHash: string;
  revision: number;
  /** When the server stored it (its clock, not the coordinator's). */
  madeAt: Date;
}

/** Every live data key of the namespace, without unwrapping any (the privacy role has no KEK). */
export async function* storedDataKeys(
  nc: NatsConnection,
  subjects: Subjects,
): AsyncGenerator<StoredKeyInfo> {
  const kv = await new Kvm(jetstream(nc, { timeout: KV_REQUEST_TIMEOUT_MS })).open(
    keysBucketName(subjects),
  );
  for await (const name of await kv.keys("k.*")) {
    const entry = await kv.get(name);
    if (entry === null || entry.operation !== "PUT") continue;
    const origin = originOf(entry.string());
    yield {
      ...origin,
      subjectHash: name.slice(2),
      revision: entry.revision,
      madeAt: entry.created,
    };
  }
}

function originOf(text: string): KeyOrigin {
  try {
    const { agent, target } = JSON.parse(text) as KeyOrigin;
    return {
      ...(typeof agent === "string" ? { agent } : {}),
      ...(target === "session" || target === "subject" ? { target } : {}),
    };
  } catch {
    return {}; // a malformed entry follows the namespace's rule
  }
}
