/**
 * Sealed session state (docs/privacy.md, "Session state"), over the memory store with keys given
 * in process (the coordinators' key service is covered by test/integration/privacy/erase.test.ts):
 * values are stored sealed and read back; under a newer key generation (the session erased) a
 * sealed value is never read as "no value" but fails with HOOKBUS_SESSION_ERASED.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";
import { SealedSessionStateStore } from "../../../src/policy/state/sealed-store.js";

const address = { policy: "taint", sessionKey: "s1", key: "tainted" };

function keys() {
  let current = { kid: "0000000000000001", key: randomBytes(32) };
  return {
    keyFor: () => Promise.resolve(current),
    erase: () => (current = { kid: "0000000000000002", key: randomBytes(32) }),
  };
}

async function failure(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("sealed session state", () => {
  it("stores ciphertext and reads the value back", async () => {
    const inner = new MemorySessionStateStore();
    const store = new SealedSessionStateStore(inner, keys());
    await store.set(address, { by: "Heron-42" });
    expect(JSON.stringify(await inner.get(address))).not.toContain("Heron-42");
    expect(await store.get(address)).toEqual({ by: "Heron-42" });
    expect(await store.update(address, (n) => ({ ...(n as object), more: 1 }))).toEqual({
      by: "Heron-42",
      more: 1,
    });
    expect(await store.get({ ...address, key: "absent" })).toBeUndefined();
  });

  it("fails closed after an erasure: never undefined, for get and for update", async () => {
    const source = keys();
    const store = new SealedSessionStateStore(new MemorySessionStateStore(), source);
    await store.set(address, true);
    source.erase();
    const read = await failure(store.get(address));
    expect(isHookbusError(read, "HOOKBUS_SESSION_ERASED"), String(read)).toBe(true);
    const updated = await failure(store.update(address, () => false));
    expect(isHookbusError(updated, "HOOKBUS_SESSION_ERASED"), String(updated)).toBe(true);
    // A value moved to another key name does not open either.
    const inner = new MemorySessionStateStore();
    const moved = new SealedSessionStateStore(inner, keys());
    await moved.set(address, true);
    await inner.set({ ...address, key: "other" }, await inner.get(address));
    const other = await failure(moved.get({ ...address, key: "other" }));
    expect(isHookbusError(other, "HOOKBUS_SESSION_ERASED"), String(other)).toBe(true);
  });

  it("reads a value written before sealing as it is, and seals it at its next write", async () => {
    const inner = new MemorySessionStateStore();
    await inner.set(address, 3);
    const store = new SealedSessionStateStore(inner, keys());
    expect(await store.get(address)).toBe(3);
    expect(await store.update(address, (n) => (n as number) + 1)).toBe(4);
    expect(await inner.get(address)).toHaveProperty(["hookbus-sealed"]);
  });
});
