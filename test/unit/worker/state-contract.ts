/**
 * The behaviour every SessionStateStore must have, run against the memory store (unit) and the
 * JetStream KV store (integration), so replay and unit tests see what production sees.
 */
import { describe, expect, it } from "vitest";
import {
  createSessionState,
  type SessionStateStore,
} from "../../../src/policy/state/session-state.js";

export function describeStateStore(
  name: string,
  makeStore: () => SessionStateStore | Promise<SessionStateStore>,
): void {
  describe(`${name}: SessionStateStore contract`, () => {
    it("get of a missing key is undefined; set then get returns the value", async () => {
      const state = createSessionState(await makeStore(), "p1", "session-1");
      expect(await state.get("missing")).toBeUndefined();
      await state.set("flag", { tainted: true, by: ["web_fetch"] });
      expect(await state.get("flag")).toEqual({ tainted: true, by: ["web_fetch"] });
      await state.set("flag", false);
      expect(await state.get("flag")).toBe(false);
    });

    it("keeps JSON values of every kind, as copies", async () => {
      const state = createSessionState(await makeStore(), "p1", "copies");
      for (const value of [0, -1.5, "", "text", null, [], [1, "two"], { a: { b: [null] } }, true]) {
        await state.set("v", value);
        expect(await state.get("v")).toEqual(value);
      }
      const original = { list: [1] };
      await state.set("obj", original);
      original.list.push(2); // mutating what was stored must not change the store
      const read = await state.get<{ list: number[] }>("obj");
      expect(read).toEqual({ list: [1] });
      read!.list.push(3); // nor mutating what was read
      expect(await state.get("obj")).toEqual({ list: [1] });
    });

    it("refuses values without a JSON form instead of storing nothing", async () => {
      const state = createSessionState(await makeStore(), "p1", "bad-values");
      await expect(state.set("u", undefined)).rejects.toThrow(TypeError);
      await expect(state.update("u", () => undefined as unknown as number)).rejects.toThrow(
        TypeError,
      );
      await expect(state.set("f", () => 1)).rejects.toThrow(TypeError);
      await expect(state.set("", 1)).rejects.toThrow(TypeError);
      expect(await state.get("u")).toBeUndefined();
    });

    it("update starts from undefined, returns the new value, and sees the last write", async () => {
      const state = createSessionState(await makeStore(), "p1", "counter");
      const seen: (number | undefined)[] = [];
      expect(await state.update<number>("n", (prev) => (seen.push(prev), (prev ?? 0) + 1))).toBe(1);
      expect(await state.update<number>("n", (prev) => (seen.push(prev), (prev ?? 0) + 1))).toBe(2);
      await state.set("n", 10);
      expect(await state.update<number>("n", (prev) => (prev ?? 0) + 5)).toBe(15);
      expect(await state.get("n")).toBe(15);
      expect(seen).toEqual([undefined, 1]);
    });

    it("a throwing update function changes nothing and rejects with its error", async () => {
      const state = createSessionState(await makeStore(), "p1", "throws");
      await state.set("n", 1);
      const boom = new Error("boom");
      await expect(
        state.update("n", () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      expect(await state.get("n")).toBe(1);
    });

    it("delete removes a key; update and set after a delete start again", async () => {
      const state = createSessionState(await makeStore(), "p1", "deleting");
      await state.delete("never-set"); // not an error
      await state.set("k", "v");
      await state.delete("k");
      expect(await state.get("k")).toBeUndefined();
      expect(await state.update<number>("k", (prev) => (prev === undefined ? 1 : 99))).toBe(1);
      await state.delete("k");
      await state.set("k", "again");
      expect(await state.get("k")).toBe("again");
    });

    it("is scoped by policy and by session, whatever characters the ids contain", async () => {
      const store = await makeStore();
      const odd = "sess.with dots*and>wild cards/ünïcödé=";
      const a = createSessionState(store, "policy-a", odd);
      const b = createSessionState(store, "policy-b", odd);
      const a2 = createSessionState(store, "policy-a", "sess");
      const a3 = createSessionState(store, "policy-a", "sess.with dots*and>wild cards/ünïcödé");
      await a.set("k.ey *>", "a");
      await b.set("k.ey *>", "b");
      await a2.set("k.ey *>", "a2");
      expect(await a.get("k.ey *>")).toBe("a");
      expect(await b.get("k.ey *>")).toBe("b");
      expect(await a2.get("k.ey *>")).toBe("a2");
      expect(await a3.get("k.ey *>")).toBeUndefined();
      expect(await a.get("k.ey")).toBeUndefined();
      expect(a.sessionKey).toBe(odd);
      expect(a.policy).toBe("policy-a");
    });

    it("concurrent updates of one key lose no increment", async () => {
      const store = await makeStore();
      const states = [0, 1, 2].map(() => createSessionState(store, "p1", "concurrent"));
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          states[i % 3]!.update<number>("n", (prev) => (prev ?? 0) + 1),
        ),
      );
      expect(await states[0]!.get("n")).toBe(30);
    });
  });
}
