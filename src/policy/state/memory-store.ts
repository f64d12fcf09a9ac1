/**
 * Session state in process memory, with the semantics of the KV store (values are JSON copies,
 * `update` is atomic), for replay and unit tests. Nothing is shared between processes and
 * nothing survives a restart; values never expire.
 */
import {
  parseStateValue,
  serializeStateValue,
  type SessionStateStore,
  type StateAddress,
} from "./session-state.js";

export class MemorySessionStateStore implements SessionStateStore {
  private readonly values = new Map<string, string>();

  get(address: StateAddress): Promise<unknown> {
    return new Promise((resolve) => {
      const json = this.values.get(slot(address));
      resolve(json === undefined ? undefined : parseStateValue(json));
    });
  }

  set(address: StateAddress, value: unknown): Promise<void> {
    return new Promise((resolve) => {
      this.values.set(slot(address), serializeStateValue(address, value));
      resolve();
    });
  }

  update(address: StateAddress, fn: (previous: unknown) => unknown): Promise<unknown> {
    // The executor runs synchronously, so this read-modify-write cannot interleave with another:
    // atomic by construction. Whatever `fn` throws rejects the promise unchanged.
    return new Promise((resolve) => {
      const json = this.values.get(slot(address));
      const next = fn(json === undefined ? undefined : parseStateValue(json));
      const stored = serializeStateValue(address, next);
      this.values.set(slot(address), stored);
      resolve(parseStateValue(stored));
    });
  }

  delete(address: StateAddress): Promise<void> {
    this.values.delete(slot(address));
    return Promise.resolve();
  }

  /** Forget everything (between replays or tests). */
  clear(): void {
    this.values.clear();
  }
}

/** JSON of the triple: unambiguous whatever characters the parts contain. */
function slot(address: StateAddress): string {
  return JSON.stringify([address.policy, address.sessionKey, address.key]);
}
