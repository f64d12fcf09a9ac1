/**
 * before_response_emit: first writer wins with a cross-lock on content/allContent, allContent
 * bounded by what the agent produced, and content "" as a block.
 */
import { describe, expect, it } from "vitest";
import { type HookEvent, type PolicyOutcomeInput } from "../../../src/index.js";
import { checkedMerge, ok } from "../../support/merge.js";

function merge(event: HookEvent<"before_response_emit">, outcomes: PolicyOutcomeInput[]) {
  return checkedMerge("before_response_emit", event, outcomes);
}

const event: HookEvent<"before_response_emit"> = {
  content: "your key is sk-123",
  allContent: ["looking up sk-123", "your key is sk-123"],
  channel: "web",
  messageCount: 4,
};

describe("before_response_emit: content and allContent, first writer wins", () => {
  it("keeps the highest-priority content", () => {
    const result = merge(event, [
      ok("formatter", 1, { content: "Your key is sk-123." }),
      ok("redactor", 10, { content: "your key is [redacted]" }),
    ]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.content).toBe("your key is [redacted]");
    expect(result.decision.decidedBy).toEqual({ content: ["redactor"] });
  });

  it("keeps the highest-priority allContent", () => {
    const result = merge(event, [
      ok("low", 1, { allContent: ["a", "b"] }),
      ok("high", 2, { allContent: ["A", "B"] }),
    ]);
    expect(result.decision.allContent).toEqual(["A", "B"]);
    expect(result.decision.decidedBy).toEqual({ allContent: ["high"] });
  });
});

describe("before_response_emit: cross-lock", () => {
  it("locks allContent for lower-priority policies once a policy sets content", () => {
    const result = merge(event, [
      ok("redactor", 10, { content: "your key is [redacted]" }),
      ok("utility", 1, { allContent: ["looking up sk-123", "your key is sk-123"] }),
    ]);
    expect(result.decision.content).toBe("your key is [redacted]");
    expect("allContent" in result.decision).toBe(false);
    expect(result.decision.decidedBy).toEqual({ content: ["redactor"] });
  });

  it("locks content for lower-priority policies once a policy sets allContent", () => {
    const result = merge(event, [
      ok("redactor", 10, { allContent: ["looking up [redacted]", "your key is [redacted]"] }),
      ok("utility", 1, { content: "your key is sk-123 (formatted)" }),
    ]);
    expect(result.decision.allContent).toEqual(["looking up [redacted]", "your key is [redacted]"]);
    expect("content" in result.decision).toBe(false);
    expect(result.decision.decidedBy).toEqual({ allContent: ["redactor"] });
  });

  it("stops a lower utility plugin from overriding a security plugin's redaction via the other field", () => {
    for (const [security, utility] of [
      [{ content: "[redacted]" }, { allContent: ["sk-123", "sk-123"] }],
      [{ allContent: ["[redacted]", "[redacted]"] }, { content: "sk-123" }],
    ] as const) {
      const result = merge(event, [ok("security", 100, security), ok("utility", 1, utility)]);
      expect(result.decision.decidedBy).toEqual(
        Object.fromEntries(Object.keys(security).map((k) => [k, ["security"]])),
      );
      expect(JSON.stringify(result.decision)).not.toContain("sk-123");
    }
  });

  it("applies both fields when the same policy sets content and allContent", () => {
    const result = merge(event, [
      ok("redactor", 10, {
        content: "your key is [redacted]",
        allContent: ["looking up [redacted]", "your key is [redacted]"],
      }),
      ok("utility", 1, { content: "x", allContent: ["x", "y"] }),
    ]);
    expect(result.decision.content).toBe("your key is [redacted]");
    expect(result.decision.allContent).toEqual(["looking up [redacted]", "your key is [redacted]"]);
    expect(result.decision.decidedBy).toEqual({ content: ["redactor"], allContent: ["redactor"] });
  });
});

describe("before_response_emit: allContent is bounded by the original", () => {
  it("drops allContent entries beyond the original count", () => {
    const result = merge(event, [
      ok("injector", 1, { allContent: ["one", "two", "three: injected extra turn"] }),
    ]);
    expect(result.decision.allContent).toEqual(["one", "two"]);
  });

  it("drops the original texts a shorter list does not supply (a redactor never leaks a turn)", () => {
    const result = merge(event, [ok("partial", 1, { allContent: ["[REDACTED]"] })]);
    expect(result.decision.allContent).toEqual(["[REDACTED]"]);
    expect(JSON.stringify(result.decision)).not.toContain("sk-123");
  });

  it("treats allContent: [] as removing every text, while still locking content", () => {
    const result = merge(event, [
      ok("empty-list", 2, { allContent: [] }),
      ok("redactor", 1, { content: "[redacted]" }),
    ]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.allContent).toEqual([]);
    expect("content" in result.decision).toBe(false);
  });

  it("treats an empty allContent entry as a redaction of that turn, not a block", () => {
    const result = merge(event, [ok("wipe-first", 1, { allContent: ["", "ok"] })]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.allContent).toEqual(["", "ok"]);
  });
});

describe('before_response_emit: content "" is a block', () => {
  it('blocks on content ""', () => {
    const result = merge(event, [ok("wiper", 1, { content: "" })]);
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockedBy).toBe("wiper");
    expect(result.decision.blockReason).toContain('"wiper"');
    expect("content" in result.decision).toBe(false);
  });

  it('uses the blockReason of the policy that returned content ""', () => {
    const result = merge(event, [ok("wiper", 1, { content: "", blockReason: "leaked a key" })]);
    expect(result.decision.blockReason).toBe("leaked a key");
  });

  it('blocks on content "" even when a higher-priority policy already locked content', () => {
    const result = merge(event, [
      ok("redactor", 10, { content: "[redacted]" }),
      ok("wiper", 1, { content: "" }),
    ]);
    expect(result.decision.outcome).toBe("block");
    expect(result.decision.blockedBy).toBe("wiper");
  });

  it('blocks on content "" even when a higher-priority policy set allContent', () => {
    const result = merge(event, [
      ok("redactor", 10, { allContent: ["a", "b"] }),
      ok("wiper", 1, { content: "", blockReason: "no" }),
    ]);
    expect(result.decision).toStrictEqual({
      outcome: "block",
      blockReason: "no",
      blockedBy: "wiper",
      decidedBy: { block: ["wiper"] },
    });
  });

  it("does not block on whitespace content (only the exact empty string blocks)", () => {
    const result = merge(event, [ok("spacer", 1, { content: " " })]);
    expect(result.decision.outcome).toBe("modify");
    expect(result.decision.content).toBe(" ");
  });

  it('keeps the first blocker\'s reason when content "" comes after a block', () => {
    const result = merge(event, [
      ok("guard", 10, { block: true, blockReason: "first" }),
      ok("wiper", 1, { content: "", blockReason: "second" }),
    ]);
    expect(result.decision.blockReason).toBe("first");
    expect(result.decision.blockedBy).toBe("guard");
  });
});
