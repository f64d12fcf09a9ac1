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
export { mergeOutcomes, type MergeResult, type ShadowComparison } from "./merge/merge.js";
export type { PolicyEffect, PolicyEvaluation } from "./merge/evaluate.js";
export {
  PolicyOutcome,
  type PolicyOutcomeInput,
  type PolicyStatus,
  type PolicyMode,
} from "./merge/outcome.js";
export { compareByPriorityThenName } from "./merge/order.js";

// The tool vocabulary: tool classes across frameworks (docs/vocabulary.md).
export {
  TOOL_CLASSES,
  isToolClass,
  toolVocabulary,
  toolClassOf,
  toolFacts,
  parseMcpToolName,
  mcpToolName,
  ToolVocabulary,
  type ToolClass,
  type ToolIdentity,
  type ToolFacts,
  type UrlFacts,
  type McpToolName,
  type ClassifyOptions,
  type VocabularyExtension,
} from "./vocabulary/index.js";

// The process roles: policy workers, the agent SDK, the coordinator.
export * from "./worker/index.js";
export * from "./agent/index.js";
export * from "./approvals/index.js";
export {
  RequireApproval,
  ApprovalRequest,
  type ApprovalSeverity,
  type TimeoutBehavior,
} from "./catalog/approval.js";
export {
  startCoordinator,
  type Coordinator,
  type CoordinatorOptions,
} from "./coordinator/index.js";

// The bus: subjects, the registry, the log record, streams, and finding a NATS server.
export {
  Subjects,
  DEFAULT_NAMESPACE,
  type RecordKind,
  type AuditSubjectFilter,
} from "./bus/subjects.js";
export { encodeToken, decodeToken, POLICY_NAME_PATTERN } from "./bus/tokens.js";
export { Bus, type BusOptions } from "./bus/bus.js";
export { ensureLogStreams, DEFAULT_LOG_SETTINGS, type LogSettings } from "./bus/streams.js";
export { RegistryStore } from "./registry/store.js";
export { RegistrySnapshot } from "./registry/snapshot.js";
export {
  parseRegistryDocument,
  RegistryDocument,
  DEFAULT_POLICY_TIMEOUT_MS,
  type RegistryDocumentInput,
  type RegistryPolicy,
} from "./registry/document.js";
export {
  LogRecord,
  type DecisionRecord,
  type ErrorRecord,
  type LateVerdictRecord,
  type ObservationRecord,
  type RecordedOutcome,
} from "./log/record.js";

// Replay: re-decide recorded sessions with a candidate policy set (docs/replay.md).
export {
  replay,
  Replayer,
  summarizeReplay,
  ReplaySummarizer,
  readExport,
  readSelection,
  formatExportLine,
  type ReplaySummary,
  type LogSelection,
  type FieldChange,
  type ReplayEntry,
  type ReplayInput,
  type ReplayOptions,
  type ReplayResult,
  type ReplayStats,
} from "./replay/index.js";

// Audit: query the log, a session's timeline, follow new records (docs/audit.md).
export {
  queryLog,
  tailLog,
  sessionTimeline,
  toTimelineEntry,
  parseAuditTime,
  checkAuditFilter,
  AUDIT_OUTCOMES,
  type AuditFilter,
  type AuditOutcome,
  type AuditEntry,
  type AuditQuery,
  type AuditStats,
  type QueryOptions,
  type TailOptions,
  type TimelineEntry,
  type TimelineOptions,
  type DecisionStep,
  type ErrorStep,
  type LateStep,
  type ObservationStep,
  type PolicyStep,
} from "./audit/index.js";

// Tamper evidence (docs/tamper-evidence.md) and redaction in the log (docs/redaction.md).
export {
  verifyLog,
  formatVerifyReport,
  type VerifyOptions,
  type VerifyReport,
  type VerifyFinding,
  type FindingKind,
} from "./audit/verify.js";
export { makeAnchor, readAnchor, AnchorStatement, type AnchorFile } from "./audit/anchor.js";
export {
  startSealer,
  readSealLag,
  createSealKey,
  parsePublicKeys,
  sealKeyFromFile,
  sealKeyFromSeed,
  SealBatch,
  sealStreamName,
  chainHash,
  type Sealer,
  type SealerOptions,
  type SealLag,
  type StreamSealLag,
  type SealKeyPair,
} from "./sealer/index.js";
export { canonicalize } from "./log/chain.js";
export {
  redactRecord,
  hashValue,
  RedactionRule,
  REDACTION_MASK,
  type RedactionRuleInput,
} from "./log/redaction.js";
export type { ChainLink, RedactedPath } from "./log/record.js";

// Operating it: discovery, status, metrics and health endpoints (README "Operating it").
export * from "./observability/index.js";

// The audit index: the log projected into PostgreSQL (hookbus indexer; docs/audit.md).
export {
  startIndexer,
  indexLag,
  defaultIndexerConsumer,
  migrateIndex,
  assertIndexSchema,
  openIndexPool,
  queryIndex,
  queryIndexAll,
  tailIndex,
  indexStats,
  checkIndexFilter,
  INDEX_URL_ENV,
  type Indexer,
  type IndexerOptions,
  type IndexerStats,
  type IndexLag,
  type IndexFilter,
  type IndexPage,
  type IndexStats,
  type PgPool,
} from "./indexer/index.js";

// Permissions: `hookbus auth` without the CLI, and the inbox prefix each role connects with (docs/security.md).
export { generateAuth, readAuthDescription } from "./auth/generate.js";
export {
  AuthDescription,
  parseAuthDescription,
  type AuthDescriptionInput,
  type AuthRole,
  type AuthUser,
} from "./auth/description.js";
export { permissionsFor, type Permissions } from "./auth/permissions.js";
export { inboxPrefixFor } from "./auth/inbox.js";
export { readNkeySeedFile } from "./auth/seed.js";

// Limits on every input (docs/limits.md) and the observation envelope (docs/protocol.md).
export {
  DEFAULT_LIMITS,
  LIMIT_ENV,
  MAX_CONFIGURABLE_DEPTH,
  resolveLimits,
  type Limits,
} from "./limits.js";
export { ObserveRequest, ObserveReply } from "./bus/envelope.js";
export type { VerdictDigest } from "./log/record.js";
