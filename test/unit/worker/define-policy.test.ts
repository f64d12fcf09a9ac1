import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { definePolicy } from "../../../src/policy/policy.js";

function definitionError(definition: unknown): unknown {
  try {
    definePolicy(definition as Parameters<typeof definePolicy>[0]);
  } catch (error) {
    return error;
  }
  throw new Error("expected definePolicy to throw");
}

describe("definePolicy", () => {
  it("returns a frozen policy with its hooks in catalog order", () => {
    const policy = definePolicy({
      name: "Pol_icy-1",
      version: "2.0.0",
      hooks: {
        after_tool_call() {},
        before_response_emit: () => undefined,
        before_tool_call: () => undefined,
      },
    });
    expect(policy.name).toBe("Pol_icy-1");
    expect(policy.version).toBe("2.0.0");
    expect(policy.hookNames).toEqual([
      "before_tool_call",
      "before_response_emit",
      "after_tool_call",
    ]);
    expect(Object.isFrozen(policy)).toBe(true);
    expect(Object.isFrozen(policy.hooks)).toBe(true);
    expect(definePolicy({ name: "v", hooks: { llm_input() {} } }).version).toBeUndefined();
  });

  it.each([
    ["an empty name", { name: "", hooks: { llm_input() {} } }, /invalid policy name/],
    ["a name with a dot", { name: "a.b", hooks: { llm_input() {} } }, /invalid policy name/],
    ["a name with a wildcard", { name: "a*", hooks: { llm_input() {} } }, /invalid policy name/],
    [
      "a name longer than 64",
      { name: "x".repeat(65), hooks: { llm_input() {} } },
      /invalid policy name/,
    ],
    ["an empty version", { name: "p", version: "", hooks: { llm_input() {} } }, /version/],
    ["no hooks object", { name: "p" }, /no hooks/],
    [
      "an unknown hook",
      { name: "p", hooks: { before_tool_cal() {} } },
      /unknown hook "before_tool_cal"/,
    ],
    [
      "a handler that is not a function",
      { name: "p", hooks: { before_tool_call: { block: true } } },
      /not a function/,
    ],
    ["no handler at all", { name: "p", hooks: {} }, /handles no hook/],
  ])("refuses %s with HOOKBUS_INVALID_POLICY", (_what, definition, message) => {
    const error = definitionError(definition);
    expect(isHookbusError(error, "HOOKBUS_INVALID_POLICY")).toBe(true);
    expect((error as Error).message).toMatch(message);
  });
});
