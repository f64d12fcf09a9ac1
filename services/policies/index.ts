/**
 * The example policies: each a factory (configure it) and a default instance (the demo's, and
 * what `services/policies/registry.example.json` registers). Serve them with
 * `runPolicy(examplePolicies, { nc })` or one by one; see docs/example-policies.md.
 */
import type { Policy } from "../../src/index.js";
import { defaultInjectionScreen } from "./injection-screen.js";
import { defaultPiiRedactor } from "./pii-redactor.js";
import { defaultSessionBudget } from "./session-budget.js";
import { defaultTaintGuard } from "./taint-guard.js";
import { defaultToolPolicy } from "./tool-policy.js";

export {
  toolPolicy,
  defaultToolPolicy,
  ToolRules,
  callArguments,
  type ArgRule,
  type ToolPolicyOptions,
  type ToolJudgement,
} from "./tool-policy.js";
export {
  piiRedactor,
  defaultPiiRedactor,
  Redactor,
  redactText,
  REDACTION_KINDS,
  type PiiRedactorOptions,
  type RedactOptions,
  type RedactionKind,
  type RedactionResult,
  type Finding,
  type ExtraPattern,
} from "./pii-redactor.js";
export {
  injectionScreen,
  defaultInjectionScreen,
  InjectionScreen,
  BUILT_IN_RULES,
  type InjectionScreenOptions,
  type InjectionRule,
  type InjectionAssessment,
  type RuleHit,
} from "./injection-screen.js";
export {
  sessionBudget,
  defaultSessionBudget,
  BUDGET_STATE_KEY,
  type SessionBudgetOptions,
  type BudgetUsage,
} from "./session-budget.js";
export {
  taintGuard,
  defaultTaintGuard,
  TAINT_STATE_KEY,
  DEFAULT_SINKS,
  DEFAULT_UNTRUSTED_SOURCES,
  type TaintGuardOptions,
  type Taint,
} from "./taint-guard.js";
export type { ToolPattern } from "./shared.js";

/** The default instances, in registry order (highest priority first). */
export const examplePolicies: readonly Policy[] = Object.freeze([
  defaultToolPolicy,
  defaultTaintGuard,
  defaultSessionBudget,
  defaultInjectionScreen,
  defaultPiiRedactor,
]);
