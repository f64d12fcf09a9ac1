/**
 * The error an agent gets when a merged decision (or the after_llm_call gate) blocks a call.
 * It carries the whole decision, so the agent can log or show the reason and the policy.
 */
import type { Decision, ModifyingHookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";

/** Where a block came from: the coordinator's merged decision, or the SDK's after_llm_call gate. */
export type BlockSource = "decision" | "after_llm_call_gate";

export class HookbusBlockedError<
  H extends ModifyingHookName = ModifyingHookName,
> extends HookbusError {
  readonly hook: H;
  readonly decision: Decision<H>;
  readonly blockReason: string | undefined;
  /** The policy whose block decided the outcome, when known. */
  readonly blockedBy: string | undefined;
  readonly source: BlockSource;
  /**
   * A sentinel property, so `isHookbusBlockedError` works even when two copies of this module are
   * loaded (bundler chunks, dual-package hazard), where `instanceof` silently fails (seed 001
   * review: a block mistaken for an ordinary failure is a correctness bug on a security path).
   */
  readonly isHookbusBlocked = true as const;

  constructor(hook: H, decision: Decision<H>, source: BlockSource = "decision") {
    const blockReason = decision.blockReason;
    const blockedBy = decision.blockedBy;
    const by = blockedBy === undefined ? "" : ` by policy "${blockedBy}"`;
    super("HOOKBUS_BLOCKED", `${hook} blocked${by}: ${blockReason ?? "no reason given"}`, {
      hook,
      ...(blockedBy === undefined ? {} : { policy: blockedBy }),
      ...(blockReason === undefined ? {} : { blockReason }),
      source,
    });
    this.hook = hook;
    this.decision = decision;
    this.blockReason = blockReason;
    this.blockedBy = blockedBy;
    this.source = source;
  }
}

/** True for a HookbusBlockedError, from this copy of hookbus or any other (no `instanceof`). */
export function isHookbusBlockedError(value: unknown): value is HookbusBlockedError {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as Partial<HookbusBlockedError>;
  return (
    candidate.isHookbusBlocked === true &&
    candidate.code === "HOOKBUS_BLOCKED" &&
    typeof candidate.hook === "string" &&
    typeof candidate.decision === "object" &&
    candidate.decision !== null
  );
}
