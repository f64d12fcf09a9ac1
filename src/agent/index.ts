/** The agent SDK: what an agent loop (or an adapter) imports. */
export {
  HookbusClient,
  type HookbusClientOptions,
  type HookbusClientParts,
  type HookbusClientStats,
  type CallOptions,
  type CallResult,
  type DecisionSource,
  type ObserveCallOptions,
  type ObservationSink,
} from "./client.js";
export { HookbusBlockedError, isHookbusBlockedError, type BlockSource } from "./blocked.js";
export { AfterLlmCallGate, type GateVerdict, type RunRef } from "./gate.js";
export type { ObserveResult } from "./observer.js";
export type { CallTransport, RemoteDecision } from "./transport.js";
export {
  staticRegistryView,
  type RegistryView,
  type RegistryWatchHealth,
} from "./registry-view.js";
export { DEFAULT_AGENT_TIMEOUT_MS } from "./options.js";
export {
  NatsApprovalWaiter,
  type ApprovalProgress,
  type ApprovalProgressCallback,
  type ApprovalWaiter,
  type ApprovalWaitOptions,
} from "./approval-wait.js";
