/**
 * The merge unit tests' helpers: an `ok` outcome, and mergeOutcomes with its decision checked
 * against the hook's decision schema.
 */
import { expect } from "vitest";
import type { z } from "zod";
import {
  mergeOutcomes,
  modifyingHooks,
  type HookEvent,
  type ModifyingHookName,
  type PolicyOutcomeInput,
} from "../../src/index.js";

export function ok(
  policy: string,
  priority: number,
  verdict: unknown,
  extra: Partial<PolicyOutcomeInput> = {},
): PolicyOutcomeInput {
  return { policy, priority, status: "ok", verdict, ...extra };
}

/** mergeOutcomes, expecting its decision to conform to the hook's decision schema. */
export function checkedMerge<H extends ModifyingHookName>(
  hook: H,
  event: HookEvent<H>,
  outcomes: PolicyOutcomeInput[],
) {
  const result = mergeOutcomes(hook, event, outcomes);
  const parsed = (modifyingHooks[hook].decision as z.ZodType).safeParse(result.decision);
  expect(parsed.error?.issues ?? []).toEqual([]);
  return result;
}

/** checkedMerge for any hook and any event, with the decision as a plain record. */
export function looseMerge(
  hook: ModifyingHookName,
  event: unknown,
  outcomes: PolicyOutcomeInput[],
) {
  const result = checkedMerge(hook, event as never, outcomes);
  return { ...result, decision: result.decision as Record<string, unknown> };
}
