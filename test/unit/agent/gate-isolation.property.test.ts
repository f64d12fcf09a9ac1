/**
 * The gate's isolation as a property (issue 13): for any two different (agent, session, run)
 * triples, including ones that share a run id, a session or an agent, or have no run id, one's
 * gate never decides the other's tool calls, and clearing one never clears the other.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Decision } from "../../../src/catalog/catalog.js";
import { AfterLlmCallGate, type RunRef } from "../../../src/agent/gate.js";

const block: Decision<"after_llm_call"> = {
  outcome: "block",
  blockReason: "no",
  decidedBy: { block: ["p"] },
};

// Few distinct values, so that triples often share parts (the interesting cases).
const part = fc.constantFrom("a", "b", '["a","b"]', "run-7");
const ref: fc.Arbitrary<RunRef> = fc.record(
  {
    agentId: part,
    sessionKey: part,
    runId: part,
  },
  { requiredKeys: ["agentId", "sessionKey"] },
);
const same = (x: RunRef, y: RunRef) =>
  x.agentId === y.agentId && x.sessionKey === y.sessionKey && x.runId === y.runId;

describe("after_llm_call gate isolation (property)", () => {
  it("a block on one run never reaches another, and clearing another never lifts it", async () => {
    await fc.assert(
      fc.asyncProperty(ref, ref, async (x, y) => {
        fc.pre(!same(x, y));
        const gate = new AfterLlmCallGate();
        gate.open(x, Promise.resolve(block));
        expect(gate.check(y, "call-1")).toEqual({ proceed: true });
        gate.clear(y);
        expect((await gate.check(x, "call-1")).proceed).toBe(false);
        gate.clear(x);
        expect(gate.size).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
