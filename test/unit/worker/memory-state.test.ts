import { describe, expect, it } from "vitest";

import { describeStateStore } from "./state-contract.js";
import { createSessionState } from "../../../src/policy/state/session-state.js";
import { MemorySessionStateStore } from "../../../src/policy/state/memory-store.js";

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
