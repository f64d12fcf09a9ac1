import { latchBlock, type MergeRule } from "./rule.js";

/**
 * An empty final text is a block, not an empty message: a policy that wipes the response means
 * "deliver nothing". Applies even when the field is already locked by a higher-priority writer,
 * because a block may come from any policy.
 */
export function emptyStringBlocks(field: string): MergeRule {
  return {
    fields: [],
    apply(state, { policy, verdict }) {
      if (verdict[field] !== "") return;
      latchBlock(
        state,
        policy,
        (verdict.blockReason as string | undefined) ?? `policy "${policy}" emptied ${field}`,
      );
    },
  };
}
