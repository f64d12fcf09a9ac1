/**
 * hookbus: what an agent or a policy imports. The agent SDK, the policy SDK (define, invoke and
 * serve policies), the merge engine, the tool vocabulary, errors and types. It loads no role
 * beyond those two (no coordinator, sealer, indexer, PostgreSQL or UI): each role and tool has
 * its own entry point (`hookbus/coordinator`, `hookbus/audit`, ...; docs/architecture.md).
 */
export * from "./foundation/errors.js";
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
  NON_OBJECT_INPUT_KEY,
  toolInputFromParams,
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type ToolCall,
  type ToolDefinition,
  type Outcome,
} from "./catalog/common.js";
export type { RunContext, SessionContext, ToolContext } from "./catalog/context.js";
export type {
  DecisionOf,
  HookContextInput,
  HookEventInput,
  MessageInput,
  ToolCallInput,
  ToolDefinitionInput,
} from "./catalog/input.js";
export {
  assertHookName,
  assertModifyingHook,
  parseContext,
  parseDecision,
  parseEvent,
  parseVerdict,
} from "./catalog/validate.js";
export {
  RequireApproval,
  ApprovalRequest,
  type ApprovalSeverity,
  type TimeoutBehavior,
} from "./catalog/approval.js";

// The tool vocabulary: tool classes across frameworks (docs/vocabulary.md).
export * from "./vocabulary/index.js";

// The merge engine (docs/merge-rules.md).
export {
  mergeOutcomes,
  type MergeOptions,
  type MergeResult,
  type ShadowComparison,
} from "./merge/merge.js";
export type { PolicyEffect, PolicyEvaluation } from "./merge/evaluate.js";
export {
  PolicyOutcome,
  type PolicyOutcomeInput,
  type PolicyStatus,
  type PolicyMode,
} from "./merge/outcome.js";

// The policy SDK and the worker that serves policies (docs/policy-workers.md).
export * from "./policy/index.js";
export * from "./worker/index.js";

// The agent SDK (README "Calling hookbus from an agent").
export * from "./agent/index.js";

// Connecting: the namespace's bus, an nkey seed and the role's reply inbox (docs/security.md).
export { Bus, type BusOptions } from "./bus/bus.js";
export { DEFAULT_NAMESPACE } from "./bus/subjects.js";
export { readNkeySeedFile } from "./bus/nkey-seed.js";
export { inboxPrefixFor } from "./auth/inbox.js";

// Limits on every input (docs/limits.md).
export {
  DEFAULT_LIMITS,
  LIMIT_ENV,
  MAX_CONFIGURABLE_DEPTH,
  resolveLimits,
  type Limits,
} from "./foundation/limits.js";

// What the log records (docs/protocol.md); reading it is `hookbus/audit` and `hookbus/replay`.
export type {
  ApprovalRecord,
  ChainLink,
  DecisionRecord,
  ErrorRecord,
  LateVerdictRecord,
  LogRecord,
  ObservationRecord,
  RecordedOutcome,
  RedactedPath,
  VerdictDigest,
} from "./log/record.js";
export { HOOKBUS_VERSION } from "./observability/version.js";
