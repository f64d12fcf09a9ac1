export { startCoordinator, type Coordinator, type CoordinatorOptions } from "./coordinator.js";
export { DEFAULT_CALL_TIMEOUT_MS } from "./call-handler.js";
