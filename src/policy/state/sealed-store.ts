/**
 * Session state sealed at rest (docs/privacy.md, "Session state"): each value is stored as
 * ChaCha20-Poly1305 ciphertext under its policy's state key of its session, which a coordinator
 * hands out (src/privacy/state-keys.ts) and which dies with the session's data key. A value
 * sealed under a key generation that is no longer the session's (the session was erased) is
 * never read as "no value": the read fails with HOOKBUS_SESSION_ERASED, so a policy cannot
 * mistake an erased session for a fresh, untainted one (its call fails closed).
 *
 * Values written before sealing was turned on are read as they are and sealed on their next write.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { Header } from "../../bus/headers.js";
import type { Subjects } from "../../bus/subjects.js";
import { ErrorCodes, HookbusError, type ErrorCode } from "../../foundation/errors.js";
import type { SessionStateStore, StateAddress } from "./session-state.js";

const SEALED = "hookbus-sealed";
const CIPHER = "chacha20-poly1305";
const TAG_BYTES = 16;
/** Keys remembered per worker, and how long by default (an erased session is noticed by then). */
const MAX_CACHED_KEYS = 10_000;
export const DEFAULT_STATE_KEY_CACHE_MS = 30_000;
const KEY_REQUEST_MS = 5_000;

interface StateKey {
  kid: string;
  key: Buffer;
}

interface SealedValue {
  [SEALED]: { kid: string; iv: string; ct: string };
}

const isSealed = (value: unknown): value is SealedValue =>
  typeof value === "object" && value !== null && SEALED in value;

/** Where state keys come from: a coordinator, asked over NATS. */
export class StateKeyClient {
  private readonly cache = new Map<string, { key: StateKey; until: number }>();

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
    private readonly cacheMs = DEFAULT_STATE_KEY_CACHE_MS,
  ) {}

  async keyFor(policy: string, sessionKey: string): Promise<StateKey> {
    const name = `${policy}\0${sessionKey}`;
    const hit = this.cache.get(name);
    if (hit !== undefined && hit.until > Date.now()) return hit.key;
    const key = await this.ask(policy, sessionKey);
    if (this.cache.size >= MAX_CACHED_KEYS) this.cache.clear();
    this.cache.set(name, { key, until: Date.now() + this.cacheMs });
    return key;
  }

  private async ask(policy: string, sessionKey: string): Promise<StateKey> {
    let msg;
    try {
      msg = await this.nc.request(
        this.subjects.stateKey(policy),
        new TextEncoder().encode(JSON.stringify({ sessionKey })),
        { timeout: KEY_REQUEST_MS },
      );
    } catch (error) {
      throw new HookbusError(
        "HOOKBUS_PRIVACY_KEY_UNAVAILABLE",
        `no coordinator gave the state key of policy "${policy}": ${(error as Error).message}`,
        { policy },
        error,
      );
    }
    const body = JSON.parse(new TextDecoder().decode(msg.data)) as {
      kid?: string;
      key?: string;
      error?: { message?: string };
    };
    const code = msg.headers?.get(Header.ErrorCode);
    if ((code !== undefined && code !== "") || body.kid === undefined || body.key === undefined) {
      const known = code !== undefined && Object.hasOwn(ErrorCodes, code);
      throw new HookbusError(
        known ? (code as ErrorCode) : "HOOKBUS_PRIVACY_KEY_UNAVAILABLE",
        body.error?.message ?? "a state key reply without a key",
        { policy },
      );
    }
    return { kid: body.kid, key: Buffer.from(body.key, "base64") };
  }
}

function aad(address: StateAddress, kid: string): Buffer {
  return Buffer.from(
    `hookbus-state-v1\0${address.policy}\0${address.sessionKey}\0${address.key}\0${kid}`,
    "utf8",
  );
}

function seal(address: StateAddress, key: StateKey, value: unknown): unknown {
  const json = JSON.stringify(value) as string | undefined;
  // No JSON form: handed on as it is, for the store below to refuse as it always has.
  if (json === undefined) return value;
  const iv = randomBytes(12);
  const text = Buffer.from(json, "utf8");
  const cipher = createCipheriv(CIPHER, key.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad(address, key.kid), { plaintextLength: text.length });
  const ct = Buffer.concat([cipher.update(text), cipher.final(), cipher.getAuthTag()]);
  return { [SEALED]: { kid: key.kid, iv: iv.toString("base64"), ct: ct.toString("base64") } };
}

function erased(address: StateAddress, why: string): HookbusError {
  return new HookbusError(
    "HOOKBUS_SESSION_ERASED",
    `state "${address.key}" of policy "${address.policy}" cannot be read: ${why}; the session was erased, and its state is never read as empty`,
    { policy: address.policy, key: address.key },
  );
}

function open(address: StateAddress, key: StateKey, stored: unknown): unknown {
  if (!isSealed(stored)) return stored;
  const { kid, iv, ct } = stored[SEALED];
  if (kid !== key.kid) throw erased(address, "it was sealed under an erased key");
  try {
    const bytes = Buffer.from(ct, "base64");
    const decipher = createDecipheriv(CIPHER, key.key, Buffer.from(iv, "base64"), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(aad(address, kid), { plaintextLength: bytes.length - TAG_BYTES });
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const text = Buffer.concat([
      decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
      decipher.final(),
    ]);
    return JSON.parse(text.toString("utf8"));
  } catch {
    throw erased(address, "it does not open with the session's key");
  }
}

/** A SessionStateStore whose values are sealed, around any other store. */
export class SealedSessionStateStore implements SessionStateStore {
  constructor(
    private readonly inner: SessionStateStore,
    private readonly keys: Pick<StateKeyClient, "keyFor">,
  ) {}

  async get(address: StateAddress): Promise<unknown> {
    const key = await this.keys.keyFor(address.policy, address.sessionKey);
    return open(address, key, await this.inner.get(address));
  }

  async set(address: StateAddress, value: unknown): Promise<void> {
    const key = await this.keys.keyFor(address.policy, address.sessionKey);
    await this.inner.set(address, seal(address, key, value));
  }

  async update(address: StateAddress, fn: (previous: unknown) => unknown): Promise<unknown> {
    const key = await this.keys.keyFor(address.policy, address.sessionKey);
    const stored = await this.inner.update(address, (previous) =>
      seal(address, key, fn(open(address, key, previous))),
    );
    return open(address, key, stored);
  }

  async delete(address: StateAddress): Promise<void> {
    await this.inner.delete(address);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
