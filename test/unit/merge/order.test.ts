/**
 * Merge order: priority (highest first), then policy name in code-unit order. The order depends
 * only on the outcomes, never on which worker answered first or on the machine's locale.
 */
import { describe, expect, it } from "vitest";
import { type HookEvent, type PolicyOutcomeInput } from "../../../src/index.js";
import { ok, checkedMerge as merge } from "../../support/merge.js";
import { compareByPriorityThenName } from "../../../src/merge/order.js";

function permutations<T>(items: readonly T[]): T[][] {
  if (items.length <= 1) return [[...items]];
  return items.flatMap((item, i) =>
    permutations([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [item, ...rest]),
  );
}

const llmEvent: HookEvent<"before_llm_call"> = {
  messages: [{ role: "user", content: "hello" }],
  systemPrompt: "You are helpful.",
};

describe("merge order", () => {
  it("folds outcomes by priority, highest first, whatever the names", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("a-low", 1, { systemPrompt: "from a-low" }),
      ok("z-high", 10, { systemPrompt: "from z-high" }),
    ]);
    expect(result.decision.systemPrompt).toBe("from z-high");
    expect(result.decision.decidedBy).toEqual({ systemPrompt: ["z-high"] });
    expect(result.policies.map((p) => p.policy)).toEqual(["z-high", "a-low"]);
  });

  it("breaks priority ties by policy name", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("beta", 5, { systemPrompt: "from beta" }),
      ok("alpha", 5, { systemPrompt: "from alpha" }),
    ]);
    expect(result.decision.systemPrompt).toBe("from alpha");
    expect(result.policies.map((p) => p.policy)).toEqual(["alpha", "beta"]);
  });

  it("compares tied names in code-unit order, not locale order", () => {
    // localeCompare would put "alpha" before "Zeta" and "e" before "é" before "z"; code units
    // put "Z" (0x5A) before "a" (0x61) and "z" (0x7A) before "é" (0xE9).
    const result = merge("before_llm_call", llmEvent, [
      ok("alpha", 0, { systemPrompt: "from alpha" }),
      ok("Zeta", 0, { systemPrompt: "from Zeta" }),
      ok("é", 0, {}),
      ok("z", 0, {}),
    ]);
    expect(result.decision.systemPrompt).toBe("from Zeta");
    expect(result.policies.map((p) => p.policy)).toEqual(["Zeta", "alpha", "z", "é"]);
  });

  it("orders negative and fractional priorities numerically", () => {
    const result = merge("before_llm_call", llmEvent, [
      ok("neg", -1, {}),
      ok("half", 0.5, {}),
      ok("two", 2, {}),
      ok("zero", 0, {}),
    ]);
    expect(result.policies.map((p) => p.policy)).toEqual(["two", "half", "zero", "neg"]);
  });

  it("gives the same result for every order in which the outcomes arrive", () => {
    const outcomes: PolicyOutcomeInput[] = [
      ok("redactor", 10, { messages: [{ role: "user", content: "[redacted]" }] }),
      ok("prompt", 5, { systemPrompt: "be brief" }),
      ok("prompt-b", 5, { systemPrompt: "be verbose" }),
      { policy: "broken", priority: 1, status: "error", failMode: "fail-open" },
    ];
    const expected = merge("before_llm_call", llmEvent, outcomes);
    expect(expected.decision.systemPrompt).toBe("be brief");
    for (const order of permutations(outcomes)) {
      expect(merge("before_llm_call", llmEvent, order)).toStrictEqual(expected);
    }
  });

  it("exports a comparator that sorts by priority descending, then code-unit name", () => {
    const sorted = [
      { policy: "b", priority: 1 },
      { policy: "a", priority: 1 },
      { policy: "B", priority: 1 },
      { policy: "c", priority: 3 },
    ].sort(compareByPriorityThenName);
    expect(sorted.map((o) => o.policy)).toEqual(["c", "B", "a", "b"]);
    expect(
      compareByPriorityThenName({ policy: "x", priority: 1 }, { policy: "x", priority: 1 }),
    ).toBe(0);
  });
});
