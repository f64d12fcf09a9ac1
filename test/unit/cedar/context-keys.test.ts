import { describe, expect, it } from "vitest";
import { parseCedarPolicySet } from "../../../src/cedar/index.js";

const keys = (text: string) => parseCedarPolicySet(text).contextKeys;

describe("the context attributes a Cedar set reads", () => {
  it("collects attributes read by `.`, `[]` and `has`, however deep the expression", () => {
    expect(
      keys(`forbid (principal, action, resource) when { context has call && context.call has url &&
        (context.session.taint.contains("x") || context["content"] like "*a*") };
        forbid (principal, action, resource is Tool) when { resource.class == "shell" };`),
    ).toEqual(new Set(["call", "session", "content"]));
    expect(
      keys(`forbid (principal, action, resource) when { context has session.taint };`),
    ).toEqual(new Set(["session"]));
  });

  it("keeps the whole context when a policy uses it as a value", () => {
    expect(keys(`forbid (principal, action, resource) when { context == {} };`)).toBe("all");
    expect(
      keys(`forbid (principal, action, resource) when { [context].contains({"a": 1}) };`),
    ).toBe("all");
  });

  it("sends no context to a set that reads none", () => {
    expect(keys(`forbid (principal, action, resource == Tool::"exec");`)).toEqual(new Set());
  });
});
