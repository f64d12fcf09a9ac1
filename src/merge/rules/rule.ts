/**
 * A merge rule owns one or more verdict fields and decides how each policy's value for them
 * folds into the decision, the way each tapable hook class decides only how one tap's result
 * combines with the next. Rules never see NATS, time or randomness: the same verdicts in the same
 * order always give the same state.
 */

/** One policy's (already validated) verdict, in merge order. */
export interface Contribution {
  policy: string;
  verdict: Readonly<Record<string, unknown>>;
}

export interface FieldWrite {
  value: unknown;
  /** Policies that decided this field, in merge order. */
  by: string[];
}

export interface MergeState {
  readonly fields: Map<string, FieldWrite>;
  /**
   * Fields no later policy may write (first writer won, or a cross-lock closed them), each with
   * the policy that closed it: that policy may still write the other fields of its own lock.
   */
  readonly locked: Map<string, string>;
  block: { by: string; reason: string } | undefined;
}

export interface MergeRule {
  /** Verdict fields this rule reads; each field belongs to exactly one rule of a hook. */
  readonly fields: readonly string[];
  apply(state: MergeState, contribution: Contribution): void;
  /** Turns the folded value into what the decision carries (e.g. filter the original list). */
  finalize?(state: MergeState, event: Readonly<Record<string, unknown>>): void;
}

export function newMergeState(): MergeState {
  return { fields: new Map(), locked: new Map(), block: undefined };
}

/** Latch a block. Only the first blocker in merge order owns the outcome and its reason. */
export function latchBlock(state: MergeState, policy: string, reason: string | undefined): void {
  if (state.block !== undefined) return;
  state.block = { by: policy, reason: reason ?? `blocked by policy "${policy}"` };
}
