// A policy module as a user writes it, outside the hookbus checkout: no side effects on import.
import { definePolicy } from "hookbus";

export default definePolicy({
  name: "no-exec",
  version: "1.0.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" ? { block: true, blockReason: "exec is not allowed" } : undefined,
  },
});
