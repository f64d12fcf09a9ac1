/** hookbus/registry: the policy set in force, as a library (`hookbus registry` is its CLI). */
export { RegistryStore } from "./store.js";
export { RegistrySnapshot } from "./snapshot.js";
export type { ResponseStreaming } from "./stream-entry.js";
export {
  parseRegistryDocument,
  RegistryDocument,
  DEFAULT_POLICY_TIMEOUT_MS,
  type RegistryDocumentInput,
  type RegistryPolicy,
  type ValidRegistryDocument,
} from "./document.js";
export {
  diffRegistry,
  formatRegistryDiff,
  type PolicyChange,
  type RegistryDiff,
  type VocabularyChange,
} from "./diff.js";
export {
  StopStore,
  StopList,
  StopListFollower,
  parseStopTarget,
  stopReason,
  EMERGENCY_STOP_POLICY,
  STOP_KINDS,
  type Stop,
  type StopChange,
  type StopKind,
  type StopListState,
  type StopListSource,
  type StoppableCall,
} from "./stops.js";
export {
  applyEmergencyStop,
  type EmergencyStopOptions,
  type EmergencyStopResult,
} from "./emergency-stop.js";
export { isEnforced, type CoordinatorRevision, type Propagation } from "./propagation.js";
export {
  RetentionRules,
  ruleFor,
  isExpired,
  MAX_RETENTION_DAYS,
  MAX_RETENTION_AGENTS,
  type AppliedRule,
} from "./retention.js";
