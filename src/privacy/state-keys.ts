/**
 * Session state keys (docs/privacy.md, "Session state"): policy code in workers keeps session
 * state, and workers hold no KEK, so a coordinator hands a worker the key of one policy's state
 * of one session on request. The key is derived from the session's data key (HMAC-SHA256 over the
 * policy and the session), so erasing the session erases every state key with it, and the key
 * generation (`kid`) tells a value sealed under an erased key from one under the current key.
 *
 *   <ns>.privacy.statekey.<policy>   worker → coordinators   {"sessionKey"} → {"kid", "key"}
 *
 * The policy is the subject's token, which `hookbus auth` binds to the worker's user: a worker
 * gets its own policy's keys only. A key for a session that has none yet makes one in the keys
 * bucket, so each policy may make at most `newKeys` per window on each coordinator
 * (HOOKBUS_STATE_KEY_QUOTA past that); keys that exist are handed out without limit. A quota, not
 * "only sessions a coordinator has seen": a policy is asked before its call is recorded, by any
 * coordinator of the queue group, and observers ask for sessions they read from the log.
 */
import { createHmac } from "node:crypto";
import { headers, type Msg, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Header } from "../bus/headers.js";
import type { Subjects } from "../bus/subjects.js";
import { HookbusError, isHookbusError } from "../foundation/errors.js";
import type { DataKeyStore } from "./data-keys.js";
import { subjectDigest, type DataKey } from "./record-cipher.js";

/** Longest session key taken (the call path's limit on context strings is far below). */
const MAX_REQUEST_BYTES = 4096;

/** How many session keys one policy may make per window on one coordinator. */
export interface StateKeyQuota {
  /** Default 600: ten new sessions a second, sustained, for every policy. */
  newKeys?: number;
  /** Default 60 s. */
  windowMs?: number;
}
const DEFAULT_NEW_KEYS = 600;
const DEFAULT_WINDOW_MS = 60_000;
/** Policies counted per window: past this many, a policy not yet counted is refused too. */
const MAX_COUNTED_POLICIES = 10_000;

/** Key creations per policy in the current fixed window (the map is emptied at each window). */
class CreationQuota {
  private readonly newKeys: number;
  private readonly windowMs: number;
  private windowStart = 0;
  private readonly made = new Map<string, number>();

  constructor(quota: StateKeyQuota) {
    this.newKeys = quota.newKeys ?? DEFAULT_NEW_KEYS;
    this.windowMs = quota.windowMs ?? DEFAULT_WINDOW_MS;
  }

  take(policy: string, now: number): void {
    if (now - this.windowStart >= this.windowMs) {
      this.windowStart = now;
      this.made.clear();
    }
    const made = this.made.get(policy) ?? 0;
    if (made >= this.newKeys || (made === 0 && this.made.size >= MAX_COUNTED_POLICIES))
      throw new HookbusError(
        "HOOKBUS_STATE_KEY_QUOTA",
        `policy ${policy} made ${made} new session state keys in ${this.windowMs} ms; at most ${this.newKeys} are allowed`,
        { policy, limit: this.newKeys, windowMs: this.windowMs },
      );
    this.made.set(policy, made + 1);
  }
}

/** One policy's state key for one session, from the session's data key. */
export function stateKeyOf(dataKey: DataKey, policy: string, sessionKey: string): DataKey {
  const key = createHmac("sha256", dataKey.key)
    .update(`hookbus-state-v1\0${policy}\0${sessionKey}`, "utf8")
    .digest();
  return { kid: dataKey.kid, key };
}

function reply(msg: Msg, body: unknown, code?: string): void {
  const h = headers();
  if (code !== undefined) h.set(Header.ErrorCode, code);
  msg.respond(new TextEncoder().encode(JSON.stringify(body)), { headers: h });
}

function sessionKeyOf(msg: Msg): string {
  if (msg.data.length > MAX_REQUEST_BYTES)
    throw new HookbusError("HOOKBUS_LIMIT_EXCEEDED", `body over ${MAX_REQUEST_BYTES} bytes`, {
      limit: "bytes",
    });
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(msg.data));
  } catch {
    throw new HookbusError("HOOKBUS_BAD_MESSAGE", "the body is not JSON");
  }
  const sessionKey = (body as { sessionKey?: unknown } | null)?.sessionKey;
  if (typeof sessionKey !== "string" || sessionKey === "")
    throw new HookbusError("HOOKBUS_BAD_MESSAGE", "a state key request names a sessionKey");
  return sessionKey;
}

/** The coordinators' side: answers state key requests with keys read past any cache. */
export class StateKeyService {
  private subscription: Subscription | undefined;
  private readonly quota: CreationQuota;

  constructor(
    private readonly nc: NatsConnection,
    private readonly subjects: Subjects,
    private readonly keys: DataKeyStore,
    private readonly logger: Logger,
    quota: StateKeyQuota = {},
  ) {
    this.quota = new CreationQuota(quota);
  }

  start(queue: string): void {
    const prefix = `${this.subjects.namespace}.privacy.statekey.`;
    this.subscription = this.nc.subscribe(this.subjects.stateKeyWildcard, {
      queue,
      callback: (error, msg) => {
        if (error !== null) return void this.logger.error({ err: error }, "state keys");
        void this.answer(msg, msg.subject.slice(prefix.length));
      },
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
  }

  private async answer(msg: Msg, policy: string): Promise<void> {
    try {
      const sessionKey = sessionKeyOf(msg);
      // Read past the cache: a key erased elsewhere must not be handed out again.
      const subject = subjectDigest(`session:${sessionKey}`);
      let dataKey = await this.keys.findStored(subject);
      if (dataKey === undefined) {
        this.quota.take(policy, Date.now());
        dataKey = await this.keys.currentStored(subject, { target: "session" });
      }
      const { kid, key } = stateKeyOf(dataKey, policy, sessionKey);
      reply(msg, { kid, key: key.toString("base64") });
    } catch (error) {
      const code = isHookbusError(error) ? error.code : "HOOKBUS_INTERNAL";
      if (code === "HOOKBUS_INTERNAL") this.logger.error({ err: error }, "state key failure");
      reply(msg, { error: { code, message: (error as Error).message } }, code);
    }
  }
}
