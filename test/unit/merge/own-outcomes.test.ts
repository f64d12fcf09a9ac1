/**
 * `ownOutcomes` (the coordinator, replay) skips re-parsing outcome objects the caller built, never
 * the validation of their verdicts: only `ownVerdicts` (replay, whose verdicts came through
 * invokePolicy) does that. A worker's invalid verdict is invalid whatever the coordinator built
 * around it.
 */
import { describe, expect, it } from "vitest";
import { mergeOutcomes } from "../../../src/merge/merge.js";

const event = { toolName: "exec", toolCallId: "c1", params: { command: "ls" } };
const invalid = {
  policy: "p",
  priority: 10,
  mode: "enforce" as const,
  failMode: "fail-closed" as const,
  status: "ok" as const,
  verdict: { block: "yes", params: "not an object" },
};

describe("mergeOutcomes with the caller's own outcomes", () => {
  it("still validates each verdict against the hook's schema (ownOutcomes alone)", () => {
    for (const options of [{}, { ownOutcomes: true }]) {
      const result = mergeOutcomes("before_tool_call", event, [invalid], options);
      expect(result.policies[0]).toMatchObject({ status: "invalid", effect: "failed-closed" });
      expect(result.decision.outcome).toBe("block");
    }
  });

  it("applies a valid verdict as given", () => {
    const valid = { ...invalid, verdict: { params: { command: "ls -l" } } };
    const result = mergeOutcomes("before_tool_call", event, [valid], { ownOutcomes: true });
    expect(result.policies[0]).toMatchObject({ status: "ok", effect: "applied" });
    expect(result.decision).toMatchObject({ outcome: "modify", params: { command: "ls -l" } });
  });
});
