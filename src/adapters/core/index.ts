/** The run core framework adapters share (`hookbus/ai` and the adapters to come). */
export {
  currentHookbusRun,
  HookbusRun,
  MAX_RUN_TEXTS,
  requireHookbusRun,
  withHookbusRun,
  type HookbusRunOptions,
  type RunIdentity,
} from "./run.js";
export {
  closeSharedHookbusClient,
  MAX_SHARED_CLIENTS,
  sharedHookbusClient,
} from "./shared-client.js";
export { runGatedToolCall, type ToolCallRef, type ToolOutcome } from "./tool-call.js";
export { decideResponse } from "./response.js";
