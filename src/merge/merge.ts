/**
 * The merge engine: pure, synchronous, no I/O. Given the original event and every policy's
 * outcome, it returns the decision the agent must follow, who decided each field, and, when
 * shadow policies answered, what the decision would have been with them enforced.
 */
import { isDeepStrictEqual } from "node:util";
import type { Decision, HookEvent, ModifyingHookName } from "../catalog/catalog.js";
import { assertModifyingHook, toValidationIssues } from "../catalog/validate.js";
import { HookbusError } from "../foundation/errors.js";
import { mergeDeclarations, type HookMergeDeclaration } from "./declarations.js";
import { evaluateOutcome, type Evaluated, type PolicyEvaluation } from "./evaluate.js";
import { inMergeOrder } from "./order.js";
import { PolicyOutcome, type PolicyOutcomeInput } from "./outcome.js";
import { newMergeState, type Contribution, type MergeState } from "./rules/rule.js";

export interface ShadowComparison<H extends ModifyingHookName> {
  /** The decision with shadow policies enforced too. */
  decision: Decision<H>;
  /** Whether enforcing the shadow policies would have changed what the agent was told. */
  changed: boolean;
}

export interface MergeResult<H extends ModifyingHookName> {
  hook: H;
  /** What the agent must do. Shadow policies never affect it. */
  decision: Decision<H>;
  /** Every policy in merge order, with what its outcome did. */
  policies: PolicyEvaluation[];
  /** Present when at least one shadow outcome was given. */
  shadow?: ShadowComparison<H>;
}

function parseOutcomes(hook: string, outcomes: readonly PolicyOutcomeInput[]): PolicyOutcome[] {
  return outcomes.map((raw, index) => {
    const parsed = PolicyOutcome.safeParse(raw);
    if (parsed.success) return parsed.data;
    const issues = toValidationIssues(parsed.error).map((i) => ({
      ...i,
      path: `${index}.${i.path}`,
    }));
    throw new HookbusError(
      "HOOKBUS_INVALID_OUTCOME",
      `${hook}: outcome ${index} is malformed: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`,
      { hook, issues },
    );
  });
}

function fold(
  declaration: HookMergeDeclaration,
  event: Readonly<Record<string, unknown>>,
  contributions: readonly Contribution[],
): MergeState {
  const state = newMergeState();
  for (const contribution of contributions) {
    for (const rule of declaration.rules) rule.apply(state, contribution);
  }
  for (const rule of declaration.rules) rule.finalize?.(state, event);
  return state;
}

function toDecision(declaration: HookMergeDeclaration, state: MergeState): Record<string, unknown> {
  if (state.block !== undefined) {
    return {
      outcome: "block",
      blockReason: state.block.reason,
      blockedBy: state.block.by,
      decidedBy: { block: [state.block.by] },
    };
  }
  const replied = declaration.replyField !== undefined && state.fields.has(declaration.replyField);
  const pending =
    declaration.approvalField !== undefined && state.fields.has(declaration.approvalField);
  const outcome = replied
    ? "reply"
    : pending
      ? "pending_approval"
      : state.fields.size > 0
        ? "modify"
        : "allow";
  // Built in place, not `{ outcome, ...fields, decidedBy }` (hot path: foundation/hot-path.ts).
  const decision: Record<string, unknown> = { outcome };
  const decidedBy: Record<string, string[]> = {};
  for (const [field, write] of state.fields) {
    decision[field] = write.value;
    decidedBy[field] = write.by;
  }
  decision.decidedBy = decidedBy;
  return decision;
}

function decide(
  declaration: HookMergeDeclaration,
  event: Readonly<Record<string, unknown>>,
  evaluated: readonly Evaluated[],
): Record<string, unknown> {
  const contributions = evaluated.flatMap((e) =>
    e.contribution === undefined ? [] : [e.contribution],
  );
  return toDecision(declaration, fold(declaration, event, contributions));
}

/**
 * Two decisions tell the agent the same thing (who decided is not part of what it is told).
 * Compared structurally: the order in which fields were first written differs when a shadow
 * policy writes a field before the enforced ones, and that is not a different instruction.
 */
function sameInstruction(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const strip = ({ decidedBy: _a, blockedBy: _b, ...rest }: Record<string, unknown>) => rest;
  return isDeepStrictEqual(strip(a), strip(b));
}

export interface MergeOptions {
  /**
   * The caller built every outcome object itself from validated parts (replay: verdicts through
   * `invokePolicy`; the coordinator's policy asker: registry fields and a validated reply), so
   * they are not parsed again. Never for outcome objects received whole from the network.
   */
  ownOutcomes?: boolean;
  /**
   * Every verdict was validated against the hook's schema by the caller itself (replay: through
   * `invokePolicy`), so the merge does not validate them again. Never for verdicts that crossed
   * the network: the coordinator's come from workers and are validated here.
   */
  ownVerdicts?: boolean;
}

export function mergeOutcomes<H extends ModifyingHookName>(
  hook: H,
  event: HookEvent<H>,
  outcomes: readonly PolicyOutcomeInput[],
  options: MergeOptions = {},
): MergeResult<H> {
  assertModifyingHook(hook);
  const declaration = mergeDeclarations[hook];
  const original = event as Readonly<Record<string, unknown>>;
  const own = options.ownOutcomes === true;
  const parsed = own ? (outcomes as readonly PolicyOutcome[]) : parseOutcomes(hook, outcomes);
  const evaluated = inMergeOrder(hook, parsed).map((outcome) => ({
    outcome,
    ...evaluateOutcome(hook, outcome, options.ownVerdicts === true),
  }));

  const enforced = decide(
    declaration,
    original,
    evaluated.filter((e) => e.outcome.mode === "enforce"),
  );
  const result: MergeResult<H> = {
    hook,
    decision: enforced as Decision<H>,
    policies: evaluated.map((e) => e.evaluation),
  };
  if (evaluated.some((e) => e.outcome.mode === "shadow")) {
    const withShadow = decide(declaration, original, evaluated);
    result.shadow = {
      decision: withShadow as Decision<H>,
      changed: !sameInstruction(enforced, withShadow),
    };
  }
  return result;
}
