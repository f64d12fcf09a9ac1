/** The agent SDK: what an agent loop (or an adapter) imports. */
export {
  HookbusClient,
  type HookbusClientOptions,
  type HookbusClientStats,
  type CallOptions,
  type CallResult,
  type DecisionSource,
  type ObserveCallOptions,
} from "./client.js";
export { HookbusBlockedError, isHookbusBlockedError, type BlockSource } from "./blocked.js";
export type { ObserveResult } from "./observer.js";
export type { RegistryWatchHealth } from "./registry-view.js";
export { DEFAULT_AGENT_TIMEOUT_MS } from "./options.js";
export type {
  ApprovalProgress,
  ApprovalProgressCallback,
  ApprovalWaitOptions,
} from "./approval-wait.js";
export { agentMetrics, type FastPathCounted } from "./metrics.js";
export type { ResponseStreaming } from "../registry/stream-entry.js";
