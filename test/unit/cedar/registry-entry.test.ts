import { describe, expect, it } from "vitest";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

function rules(entry: Record<string, unknown>): string[] {
  try {
    parseRegistryDocument({
      policies: [{ name: "rules", hooks: ["before_tool_call"], priority: 1, ...entry }],
    });
  } catch (error) {
    if (!isHookbusError(error, "HOOKBUS_INVALID_REGISTRY")) throw error;
    return (error.details.issues ?? []).map((i) => i.rule);
  }
  return [];
}

describe("cedar registry entries", () => {
  it("accept a cedar entry that carries its text", () => {
    expect(rules({ kind: "cedar", cedar: "forbid (principal, action, resource);" })).toEqual([]);
  });

  it("refuse a cedar entry whose source was never read (stored without registry apply)", () => {
    expect(rules({ kind: "cedar", source: "tools.cedar" })).toEqual(["cedar_missing"]);
    expect(rules({ kind: "cedar" })).toEqual(["cedar_missing"]);
  });

  it("refuse Cedar text on a worker policy, where it would silently never run", () => {
    expect(rules({ cedar: "forbid (principal, action, resource);" })).toEqual(["cedar_kind"]);
    expect(rules({ kind: "worker", source: "tools.cedar" })).toEqual(["cedar_kind"]);
  });
});
