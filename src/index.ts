/** hookbus: the public entry point. */
export * from "./errors.js";
export {
  catalog,
  modifyingHooks,
  observationalHooks,
  HOOK_NAMES,
  MODIFYING_HOOK_NAMES,
  OBSERVATIONAL_HOOK_NAMES,
  isHookName,
  isModifyingHook,
  type FailMode,
  type HookName,
  type ModifyingHookName,
  type ObservationalHookName,
  type HookEvent,
  type HookContext,
  type Verdict,
  type Decision,
  type PolicyHandler,
  type HandlerVerdict,
  type ObservationHandler,
  type PolicyHandlers,
} from "./catalog/catalog.js";
export {
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type ToolCall,
  type ToolDefinition,
  type Outcome,
} from "./catalog/common.js";
export type { RunContext, SessionContext, ToolContext } from "./catalog/context.js";
export {
  assertHookName,
  assertModifyingHook,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
} from "./catalog/validate.js";
export { mergeOutcomes, type MergeResult, type ShadowComparison } from "./merge/merge.js";
export type { PolicyEffect, PolicyEvaluation } from "./merge/evaluate.js";
export {
  PolicyOutcome,
  type PolicyOutcomeInput,
  type PolicyStatus,
  type PolicyMode,
} from "./merge/outcome.js";
export { compareByPriorityThenName } from "./merge/order.js";
