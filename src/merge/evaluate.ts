/**
 * Turns one policy outcome into what the fold sees: its verdict, a block (a failure under
 * fail-closed), or nothing (no opinion, or a failure under fail-open).
 */
import type { FailMode, ModifyingHookName } from "../catalog/catalog.js";
import { modifyingHooks } from "../catalog/catalog.js";
import { toValidationIssues } from "../catalog/validate.js";
import { hookSchemaName, hookValidator } from "../catalog/compiled-validators.js";
import type { PolicyOutcome, PolicyStatus } from "./outcome.js";
import type { Contribution } from "./rules/rule.js";

export type PolicyEffect = "applied" | "no-opinion" | "failed-closed" | "failed-open";

export interface PolicyEvaluation {
  policy: string;
  version?: string;
  priority: number;
  mode: PolicyOutcome["mode"];
  /** The status after validation: an `ok` outcome whose verdict fails the schema becomes `invalid`. */
  status: PolicyStatus;
  failMode: FailMode;
  effect: PolicyEffect;
  error?: { code: string; message: string };
}

export interface Evaluated {
  evaluation: PolicyEvaluation;
  contribution?: Contribution;
}

/**
 * `verdictValid`: the caller validated the verdict against the hook's schema itself (replay's own
 * outcomes, built from `invokePolicy`'s validated answers), so it is not parsed a second time.
 */
export function evaluateOutcome(
  hook: ModifyingHookName,
  outcome: PolicyOutcome,
  verdictValid = false,
): Evaluated {
  const failMode = outcome.failMode ?? modifyingHooks[hook].defaultFailMode;
  let status = outcome.status;
  let error =
    outcome.error === undefined
      ? undefined
      : { code: outcome.error.code, message: outcome.error.message };

  if (status === "ok") {
    if (outcome.verdict === undefined || outcome.verdict === null) {
      return { evaluation: evaluationOf(outcome, failMode, status, "no-opinion") };
    }
    // Untrusted verdicts: the compiled validator of the hook's verdict schema (zod's answer at
    // ajv's cost, catalog/validators.ts).
    const parsed = verdictValid
      ? { success: true as const, data: outcome.verdict }
      : hookValidator(hookSchemaName(hook, "verdict")).safeParse(outcome.verdict);
    if (parsed.success) {
      const verdict = parsed.data as Record<string, unknown>;
      return {
        evaluation: evaluationOf(outcome, failMode, status, "applied"),
        contribution: { policy: outcome.policy, verdict },
      };
    }
    status = "invalid";
    const issues = toValidationIssues(parsed.error);
    error = {
      code: "HOOKBUS_INVALID_VERDICT",
      message: issues
        .map((i) => `${i.path === "" ? "(root)" : i.path}: ${i.message} (${i.rule})`)
        .join("; "),
    };
  }

  // An erased session's state cannot be read: failing open would decide as if it were clean.
  if (failMode === "fail-open" && error?.code !== "HOOKBUS_SESSION_ERASED")
    return { evaluation: evaluationOf(outcome, failMode, status, "failed-open", error) };
  const detail = error === undefined ? "" : `: ${error.message}`;
  return {
    evaluation: evaluationOf(outcome, failMode, status, "failed-closed", error),
    contribution: {
      policy: outcome.policy,
      verdict: {
        block: true,
        blockReason: `policy "${outcome.policy}" failed closed (${status})${detail}`,
      },
    },
  };
}

/**
 * One evaluation, field by field in its documented order (policy, version, priority, mode,
 * failMode, status, error, effect), never `{ ...base, status }`: this runs per policy, per call,
 * and per replayed record (hot path: foundation/hot-path.ts).
 */
function evaluationOf(
  outcome: PolicyOutcome,
  failMode: FailMode,
  status: PolicyStatus,
  effect: PolicyEffect,
  error?: { code: string; message: string },
): PolicyEvaluation {
  const evaluation = { policy: outcome.policy } as PolicyEvaluation;
  if (outcome.version !== undefined) evaluation.version = outcome.version;
  evaluation.priority = outcome.priority;
  evaluation.mode = outcome.mode;
  evaluation.failMode = failMode;
  evaluation.status = status;
  if (error !== undefined) evaluation.error = error;
  evaluation.effect = effect;
  return evaluation;
}
