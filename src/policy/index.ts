/** The policy SDK: define a policy, invoke it in process, keep its session state (docs/policy-workers.md). */
export {
  definePolicy,
  isPolicy,
  type ExactHooks,
  type ModifyingHookHandler,
  type ObservationalHookHandler,
  type Policy,
  type PolicyDefinition,
  type PolicyHooks,
  type PolicyTools,
} from "./policy.js";
export {
  invokePolicy,
  type InvokeOptions,
  type InvokeResult,
  type InvokeStatus,
} from "./invoke.js";
export {
  createSessionState,
  type SessionState,
  type SessionStateStore,
  type StateAddress,
} from "./state/session-state.js";
export { MemorySessionStateStore } from "./state/memory-store.js";
export {
  KvSessionStateStore,
  DEFAULT_STATE_TTL_MS,
  DEFAULT_STATE_MAX_ATTEMPTS,
  DEFAULT_STATE_RETRY_BASE_MS,
  DEFAULT_STATE_RETRY_MAX_MS,
  type KvSessionStateOptions,
} from "./state/kv-store.js";
export {
  callFacts,
  loadCallFacts,
  factsOptionsOf,
  type CallFacts,
  type CallFactsOptions,
} from "./call-facts.js";
