import type { MergeRule } from "./rule.js";

/**
 * A replacement list can never grow what the agent produced: entries past the original length
 * are dropped, and entries a verdict did not supply keep the original text.
 */
export function boundedByOriginal(field: string): MergeRule {
  return {
    fields: [],
    apply() {},
    finalize(state, event) {
      const write = state.fields.get(field);
      if (write === undefined) return;
      const original = (event[field] ?? []) as unknown[];
      const replacement = write.value as unknown[];
      write.value = original.map((item, index) =>
        index < replacement.length ? replacement[index] : item,
      );
    },
  };
}
