/** services/policies/registry.example.json registers exactly the example policies, validly. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

import { examplePolicies } from "../../../services/policies/index.js";
import { parseRegistryDocument } from "../../../src/registry/document.js";
import { POLICY_NAME_PATTERN } from "../../../src/bus/tokens.js";

const file = new URL("../../../services/policies/registry.example.json", import.meta.url);
const document = parseRegistryDocument(
  JSON.parse(readFileSync(file, "utf8")),
  "registry.example.json",
);

describe("registry.example.json", () => {
  it("validates and lists every example policy once, in priority order", () => {
    expect(document.policies.map((p) => p.name)).toEqual(examplePolicies.map((p) => p.name));
    const priorities = document.policies.map((p) => p.priority);
    expect([...priorities].sort((a, b) => b - a)).toEqual(priorities);
  });

  it("registers each policy only for modifying hooks it handles", () => {
    for (const entry of document.policies) {
      const policy = examplePolicies.find((p) => p.name === entry.name)!;
      expect(POLICY_NAME_PATTERN.test(policy.name)).toBe(true);
      for (const hook of entry.hooks) expect(policy.hookNames, `${entry.name}`).toContain(hook);
    }
  });

  it("registers the taint guard at before_tool_result (the deterministic taint) and ranks the injection screen above the redactor", () => {
    const byName = new Map(document.policies.map((p) => [p.name, p]));
    expect(byName.get("taint-guard")!.hooks).toContain("before_tool_result");
    expect(byName.get("injection-screen")!.priority).toBeGreaterThan(
      byName.get("pii-redactor")!.priority,
    );
    for (const entry of document.policies) expect(entry.failMode).toBe("fail-closed");
  });
});
