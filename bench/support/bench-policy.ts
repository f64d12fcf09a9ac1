/**
 * The decision benchmarks' policy: blocks `exec` and has no opinion otherwise. The in-process
 * side defines it here; the role-per-process side serves the same definition through
 * `hookbus worker` from the modules in ./policies/.
 */
import { definePolicy } from "../../src/policy/policy.js";

export function benchPolicy(name: string) {
  return definePolicy({
    name,
    version: "1",
    hooks: {
      before_tool_call: (e) =>
        e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
    },
  });
}
