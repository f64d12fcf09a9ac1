/**
 * A policy module: it defines a policy and does nothing else when imported, so `hookbus worker`,
 * `hookbus replay --policies` and tests can all load it. Run it with `npx hookbus worker
 * examples/no-shell-policy.ts`, or from your own program (examples/run-policy.ts).
 */
import { definePolicy } from "hookbus";

export const noShell = definePolicy({
  name: "no-shell",
  version: "1.0.0",
  hooks: {
    before_tool_call(event) {
      if (event.toolName === "exec")
        return { block: true, blockReason: "shell access is not allowed" };
      return undefined; // no opinion
    },
    before_llm_call(event) {
      return { tools: (event.tools ?? []).filter((t) => !("name" in t) || t.name !== "exec") };
    },
  },
});
