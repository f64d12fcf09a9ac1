/** hookbus/coordinator: the coordinator role as a library (`hookbus coordinator` is its CLI). */
export { startCoordinator, type Coordinator, type CoordinatorOptions } from "./coordinator.js";
export type { StateKeyQuota } from "../privacy/state-keys.js";
export { DEFAULT_CALL_TIMEOUT_MS } from "./call-handler.js";
export {
  EMERGENCY_STOP_POLICY,
  STOP_KINDS,
  type Stop,
  type StopKind,
  type StopList,
  type StopListState,
  type StoppableCall,
} from "../registry/stops.js";
export { ensureLogStreams, DEFAULT_LOG_SETTINGS, type LogSettings } from "../bus/streams.js";
export {
  MemorySessionFactStore,
  emptySessionFacts,
  type SessionFacts,
  type SessionFactStore,
} from "../cedar/session-facts.js";
export type { WindowBucket } from "../cedar/session-windows.js";
export {
  createSigningKey,
  signingKeyFromFile,
  signingKeyFromSeed,
  type RecordSigningKey,
} from "../log/sign/keys.js";
