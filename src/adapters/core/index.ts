/** The run core framework adapters share (`hookbus/ai`, `hookbus/pi`, `hookbus/mcp`). */
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
export {
  gateToolCall,
  reportToolResult,
  runGatedToolCall,
  toolResultText,
  type ToolCallRef,
  type ToolOutcome,
  type ToolResultReplacement,
  type ToolRun,
} from "./tool-call.js";
export { importPeer } from "./peer.js";
export { decideAfterLlmCall } from "./llm-call.js";
export { decideResponse } from "./response.js";
