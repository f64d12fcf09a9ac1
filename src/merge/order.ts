import { HookbusError } from "../foundation/errors.js";
import type { PolicyOutcome } from "./outcome.js";

/**
 * Priority first (highest first), then policy name in code-unit order: an order that depends
 * only on the registry, never on which worker answered first or on the machine's locale.
 */
export function compareByPriorityThenName(
  a: Pick<PolicyOutcome, "priority" | "policy">,
  b: Pick<PolicyOutcome, "priority" | "policy">,
): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.policy === b.policy) return 0;
  return a.policy < b.policy ? -1 : 1;
}

/** Sorted copy; two outcomes for one policy would make the order ambiguous, so that is an error. */
export function inMergeOrder<T extends PolicyOutcome>(hook: string, outcomes: readonly T[]): T[] {
  const seen = new Set<string>();
  for (const outcome of outcomes) {
    if (seen.has(outcome.policy)) {
      throw new HookbusError(
        "HOOKBUS_DUPLICATE_POLICY",
        `${hook}: two outcomes name policy "${outcome.policy}"`,
        { hook, policy: outcome.policy },
      );
    }
    seen.add(outcome.policy);
  }
  return [...outcomes].sort(compareByPriorityThenName);
}
