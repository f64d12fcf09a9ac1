import type { MergeRule } from "./rule.js";

/**
 * A replacement list is the complete replacement of what the agent produced, bounded by it:
 * entries past the original length are dropped, a shorter list drops the original entries it
 * does not list, and `[]` removes them all. A redactor can never leak a turn it did not list,
 * and no policy can add one.
 */
export function boundedByOriginal(field: string): MergeRule {
  return {
    fields: [],
    apply() {},
    finalize(state, event) {
      const write = state.fields.get(field);
      if (write === undefined) return;
      const original = (event[field] ?? []) as unknown[];
      write.value = (write.value as unknown[]).slice(0, original.length);
    },
  };
}
