import { describe, expect, it } from "vitest";
import { LateContexts } from "../../../src/coordinator/late-contexts.js";
import { RegistrySnapshot } from "../../../src/registry/snapshot.js";

const snapshot = RegistrySnapshot.empty();
const late = (n: number) => ({ context: { agentId: "a", sessionKey: `s${n}` }, snapshot });

describe("LateContexts", () => {
  it("never holds more than its bound: the oldest are forgotten first", () => {
    const contexts = new LateContexts(60_000, 3);
    for (let i = 0; i < 10; i++) {
      contexts.started(`c${i}`, late(i));
      contexts.finished(`c${i}`);
    }
    expect(contexts.size).toBe(3);
    expect(contexts.get("c6")).toBeUndefined();
    expect(contexts.get("c9")?.context).toEqual({ agentId: "a", sessionKey: "s9" });
  });

  it("sweeps in batches: at most an eighth over its bound, and back to it at each sweep", () => {
    const contexts = new LateContexts(60_000, 80);
    let peak = 0;
    for (let i = 0; i < 1000; i++) {
      contexts.started(`c${i}`, late(i));
      contexts.finished(`c${i}`);
      peak = Math.max(peak, contexts.size);
    }
    expect(peak).toBe(90);
    expect(contexts.size).toBeLessThanOrEqual(90);
    expect(contexts.get("c999")).toBeDefined();
    expect(contexts.get(`c${999 - 90}`)).toBeUndefined();
  });

  it("forgets a finished call after its window, and keeps nothing but identity and revision", () => {
    const contexts = new LateContexts(-1, 100);
    contexts.started("running", late(1));
    expect(Object.keys(contexts.get("running")!).sort()).toEqual([
      "context",
      "expiresAt",
      "snapshot",
    ]);
    contexts.finished("running");
    expect(contexts.get("running")).toBeUndefined();
    contexts.started("next", late(2));
    // Pruned on the next insert: only the running call is left.
    expect(contexts.size).toBe(1);
  });
});
