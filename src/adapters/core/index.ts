/** The run core framework adapters share (`hookbus/ai`, `hookbus/openai-agents` and the adapters to come). */
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
  decideToolCall,
  decideToolResult,
  observeToolCall,
  runGatedToolCall,
  toolContentText,
  type ToolCallRef,
  type ToolOutcome,
} from "./tool-call.js";
export {
  askAfterLlmCall,
  decideLlmCall,
  parseToolArguments,
  type AfterLlmCallEvent,
  type LlmCallDecision,
  type LlmCallEvent,
} from "./llm-call.js";
export { decideResponse } from "./response.js";
