/**
 * The registry's `facts` flag (issue 35): a worker policy asks for the call's fact set in its
 * requests; a Cedar set cannot (it gets `context.facts` by reading it), and a value that is not a
 * boolean is refused.
 */
import { describe, expect, it } from "vitest";
import { isHookbusError } from "../../../src/foundation/errors.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";

function refusal(document: unknown): string {
  try {
    parseRegistryDocument(document);
  } catch (error) {
    expect(isHookbusError(error, "HOOKBUS_INVALID_REGISTRY"), String(error)).toBe(true);
    return String((error as Error).message);
  }
  throw new Error("the document was accepted");
}

const CEDAR = `forbid (principal, action, resource) when { false };`;

describe("registry facts flag", () => {
  it("is kept on a worker entry, absent by default", () => {
    const { policies } = parseRegistryDocument({
      policies: [
        { name: "a", hooks: ["before_tool_call"], priority: 1, facts: true },
        { name: "b", hooks: ["before_tool_call"], priority: 1 },
      ],
    });
    expect(policies.map((p) => p.facts)).toEqual([true, undefined]);
  });

  it("is refused on a Cedar entry, and when it is not a boolean", () => {
    const cedar = { name: "c", kind: "cedar", cedar: CEDAR, hooks: ["before_tool_call"] };
    expect(refusal({ policies: [{ ...cedar, priority: 1, facts: true }] })).toContain(
      "policies.0.facts: `facts` belongs to a worker policy",
    );
    expect(
      refusal({
        policies: [{ name: "w", hooks: ["before_tool_call"], priority: 1, facts: "yes" }],
      }),
    ).toContain("policies.0.facts");
  });
});
