import type { MergeRule } from "./rule.js";

export interface FirstWriterOptions {
  /** Fields that close together with this one (the cross-lock of content and allContent). */
  locks?: readonly string[];
  /** A field that is taken from the same verdict as this one, and only with it (reply + reason). */
  companion?: string;
}

/**
 * First writer wins: once a higher-priority policy has set the field (say, sanitised the
 * messages), no lower-priority policy can replace it. `undefined` is "no change"; `""` and `[]`
 * are values and win like any other.
 */
export function firstWriter(field: string, options: FirstWriterOptions = {}): MergeRule {
  const { locks = [], companion } = options;
  return {
    fields: companion === undefined ? [field] : [field, companion],
    apply(state, { policy, verdict }) {
      const value = verdict[field];
      if (value === undefined || state.fields.has(field)) return;
      // A cross-lock closes the other field for the policies AFTER the writer, not for the writer
      // itself: a policy that redacts both content and allContent gets both.
      const lockedBy = state.locked.get(field);
      if (lockedBy !== undefined && lockedBy !== policy) return;
      state.fields.set(field, { value, by: [policy] });
      state.locked.set(field, policy);
      for (const other of locks) if (!state.locked.has(other)) state.locked.set(other, policy);
      if (companion !== undefined && verdict[companion] !== undefined) {
        state.fields.set(companion, { value: verdict[companion], by: [policy] });
      }
    },
  };
}

/**
 * Cross-lock: two fields that describe the same thing (the final text and all texts of the run).
 * Whoever first sets either one locks both, so a lower-priority policy cannot bypass a redaction
 * by writing the other field.
 */
export function crossLocked(a: string, b: string): MergeRule[] {
  return [firstWriter(a, { locks: [b] }), firstWriter(b, { locks: [a] })];
}
