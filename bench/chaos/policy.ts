/** The chaos suite's policy: blocks `rm`, allows the rest. Served by `hookbus worker`. */
import { definePolicy } from "../../src/index.js";

export default definePolicy({
  name: "chaos-guard",
  hooks: {
    before_tool_call: (event) =>
      (event.params as { cmd?: unknown }).cmd === "rm"
        ? { block: true, blockReason: "rm is not allowed" }
        : undefined,
  },
});
