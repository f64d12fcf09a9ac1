/**
 * Configured instances of the example policies (docs/example-policies.md): the module defines
 * them and does nothing else when imported. Serve both from one process:
 *   npx hookbus worker examples/my-policies.ts
 * The example policies live in this repository (services/policies/), not in the npm package:
 * copy the ones you need.
 */
import { sessionBudget, toolPolicy } from "../services/policies/index.js";

export const tools = toolPolicy({
  deny: ["format_disk"],
  argRules: [{ tool: "exec", arg: "command", denyIfMatches: /\bsudo\b/ }],
});
export const budget = sessionBudget({ limits: { web_search: 10, "*": 200 } });
