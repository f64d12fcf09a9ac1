/**
 * The merge engine as a library, without NATS: merge verdicts the way a coordinator does.
 *   npx tsx examples/merge-library.ts
 */
import { mergeOutcomes } from "hookbus";

const { decision } = mergeOutcomes(
  "before_tool_call",
  { toolName: "exec", params: { command: "ls" } },
  [
    {
      policy: "no-shell",
      priority: 100,
      status: "ok",
      verdict: { block: true, blockReason: "no shell" },
    },
    { policy: "audit", priority: 10, status: "ok", verdict: { block: false } },
  ],
);
// { outcome: "block", blockReason: "no shell", blockedBy: "no-shell", decidedBy: { block: ["no-shell"] } }
console.log(JSON.stringify(decision));
