/** The registry's `internalDomains` (docs/facts.md, recipients): bounded, and refused with a code. */
import { describe, expect, it } from "vitest";
import { MAX_INTERNAL_DOMAINS, parseRegistryDocument } from "../../../src/registry/document.js";

const policies = [{ name: "p", hooks: ["before_tool_call"], priority: 1 }];

describe("registry internalDomains", () => {
  it("is kept as given", () => {
    const doc = parseRegistryDocument({ policies, internalDomains: ["example.com"] });
    expect(doc.internalDomains).toEqual(["example.com"]);
  });

  it.each([
    ["too many", Array.from({ length: MAX_INTERNAL_DOMAINS + 1 }, (_, i) => `d${i}.example`)],
    ["an empty name", [""]],
    ["a name over 253 characters", [`${"a".repeat(250)}.com`]],
    ["not a list", "example.com"],
  ])("refuses %s with HOOKBUS_INVALID_REGISTRY", (_why, internalDomains) => {
    expect(() => parseRegistryDocument({ policies, internalDomains })).toThrow(
      expect.objectContaining({ code: "HOOKBUS_INVALID_REGISTRY" }) as Error,
    );
  });
});
