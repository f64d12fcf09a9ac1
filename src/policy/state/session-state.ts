/**
 * Policy session state: what a policy remembers about one session across calls (a counter of
 * tool calls, a taint flag such as "this session read untrusted web content"). Handlers see a
 * `SessionState` bound to their policy and the call's session; it is backed by a
 * `SessionStateStore` (JetStream KV in production, memory for replay and unit tests).
 *
 * Values are JSON: what is stored is what `JSON.stringify` keeps, and every read returns a fresh
 * copy, so mutating a value you read never changes the store behind your back.
 */

/** Where one value lives: state is private to a policy and scoped to a session. */
export interface StateAddress {
  policy: string;
  sessionKey: string;
  key: string;
  /** Epoch ms when the caller stops waiting; a store gives up then (HOOKBUS_POLICY_TIMEOUT). */
  deadline?: number;
}

/**
 * The storage behind `SessionState`. Implement it to keep state elsewhere; `update` must be
 * atomic (no concurrent update of the same address is ever lost), and `fn` may be called more
 * than once (after losing a race), so it must not have side effects.
 */
export interface SessionStateStore {
  /** The value, or undefined when there is none. */
  get(address: StateAddress): Promise<unknown>;
  set(address: StateAddress, value: unknown): Promise<void>;
  /** Apply `fn` to the current value (undefined when none) atomically; resolves to the new value. */
  update(address: StateAddress, fn: (previous: unknown) => unknown): Promise<unknown>;
  delete(address: StateAddress): Promise<void>;
  /** Release resources; the runner calls it on stop only for stores it created itself. */
  close?(): Promise<void>;
}

/** One policy's memory of one session. Keys are any non-empty strings. */
export interface SessionState {
  readonly policy: string;
  readonly sessionKey: string;
  get<T = unknown>(key: string): Promise<T | undefined>;
  set<T>(key: string, value: T): Promise<void>;
  /**
   * Read-modify-write without lost updates, even across workers: `fn` gets the current value
   * (undefined when none) and returns the new one. `fn` may run more than once when another
   * worker wrote in between, so keep it pure. Fails with HOOKBUS_STATE_CONFLICT when the
   * store gives up after a bounded number of lost races.
   */
  update<T>(key: string, fn: (previous: T | undefined) => T): Promise<T>;
  delete(key: string): Promise<void>;
}

export function createSessionState(
  store: SessionStateStore,
  policy: string,
  sessionKey: string,
  deadline?: number,
): SessionState {
  const at = (key: string): StateAddress => {
    if (typeof key !== "string" || key === "") {
      throw new TypeError(`state keys are non-empty strings, got ${JSON.stringify(key)}`);
    }
    return deadline === undefined
      ? { policy, sessionKey, key }
      : { policy, sessionKey, key, deadline };
  };
  return {
    policy,
    sessionKey,
    get: async <T>(key: string) => (await store.get(at(key))) as T | undefined,
    set: async (key, value) => store.set(at(key), value),
    update: async <T>(key: string, fn: (previous: T | undefined) => T) =>
      (await store.update(at(key), (previous) => fn(previous as T | undefined))) as T,
    delete: async (key) => store.delete(at(key)),
  };
}

/**
 * The stored form of a value. `undefined` (and functions, symbols) have no JSON form: storing
 * them is refused rather than silently turned into "no value"; use `delete` for that.
 */
export function serializeStateValue(address: StateAddress, value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new TypeError(
      `state value for "${address.key}" of policy "${address.policy}" is not JSON: ${String(error)}`,
      { cause: error },
    );
  }
  if (json === undefined) {
    throw new TypeError(
      `state value for "${address.key}" of policy "${address.policy}" has no JSON form (${typeof value}); use delete() to remove a key`,
    );
  }
  return json;
}

export function parseStateValue(json: string): unknown {
  return JSON.parse(json);
}
