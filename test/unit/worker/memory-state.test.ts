import { describe, expect, it } from "vitest";
import { createSessionState, MemorySessionStateStore } from "../../../src/worker/index.js";
import { describeStateStore } from "./state-contract.js";

describeStateStore("MemorySessionStateStore", () => new MemorySessionStateStore());

describe("MemorySessionStateStore", () => {
  it("clear() forgets everything", async () => {
    const store = new MemorySessionStateStore();
    const state = createSessionState(store, "p", "s");
    await state.set("k", 1);
    store.clear();
    expect(await state.get("k")).toBeUndefined();
  });
});
