import { latchBlock, type MergeRule } from "./rule.js";

/**
 * One-way block latch: `block: true` blocks for good; `block: false` is "no opinion" and never
 * an un-block. `blockReason` counts only from the policy that blocks, so a policy that merely
 * sets a reason cannot rewrite why a call was stopped.
 */
export function blockLatch(): MergeRule {
  return {
    fields: ["block", "blockReason"],
    apply(state, { policy, verdict }) {
      if (verdict.block === true)
        latchBlock(state, policy, verdict.blockReason as string | undefined);
    },
  };
}
