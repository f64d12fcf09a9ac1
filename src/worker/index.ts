/** The policy worker SDK: define a policy, run it on NATS, test or replay it in process. */
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
export { loadPolicyModule, loadPolicyModules, type LoadedPolicy } from "./load-policies.js";
export {
  invokePolicy,
  type InvokeOptions,
  type InvokeResult,
  type InvokeStatus,
} from "./invoke.js";
export {
  runPolicy,
  DEFAULT_CONCURRENCY,
  type PolicyRunner,
  type RunPolicyOptions,
} from "./runner.js";
export { observerDurableName, DEFAULT_OBSERVE_OPTIONS, type ObserveOptions } from "./observer.js";
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
