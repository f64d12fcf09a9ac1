import type { MergeRule } from "./rule.js";

export interface IntersectionOptions<Item> {
  /** The key a verdict entry allows (a tool name, a tool-call id); undefined allows nothing. */
  allowedKey(entry: unknown): string | undefined;
  /** The key of an entry of the ORIGINAL list; an entry without a key is never allowed. */
  originalKey(item: Item): string | undefined;
  /** Where the original list lives in the event. */
  originalField: string;
}

/**
 * Intersection latch for allowlists: each policy's list can only narrow what the policies before
 * it allowed. The decision is the ORIGINAL list filtered by the surviving keys, so no policy can
 * add an entry, change a definition, or smuggle in a tool the agent never offered.
 */
export function intersection<Item>(field: string, options: IntersectionOptions<Item>): MergeRule {
  return {
    fields: [field],
    apply(state, { policy, verdict }) {
      const entries = verdict[field];
      if (!Array.isArray(entries)) return;
      const keys = new Set<string>();
      for (const entry of entries) {
        const key = options.allowedKey(entry);
        if (key !== undefined) keys.add(key);
      }
      const prior = state.fields.get(field);
      if (prior === undefined) {
        state.fields.set(field, { value: keys, by: [policy] });
        return;
      }
      const allowed = prior.value as Set<string>;
      for (const key of [...allowed]) if (!keys.has(key)) allowed.delete(key);
      prior.by.push(policy);
    },
    finalize(state, event) {
      const write = state.fields.get(field);
      if (write === undefined) return;
      const allowed = write.value as Set<string>;
      const original = (event[options.originalField] ?? []) as Item[];
      write.value = original.filter((item) => {
        const key = options.originalKey(item);
        return key !== undefined && allowed.has(key);
      });
    },
  };
}
