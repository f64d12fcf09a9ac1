/** The run core framework adapters share (`hookbus/ai`, `hookbus/pi`, `hookbus/openai-agents`, `hookbus/mcp`). */
export {
  currentHookbusRun,
  HookbusRun,
  MAX_RUN_TEXTS,
  requireHookbusRun,
  withHookbusRun,
  type AdapterDecisionSource,
  type DecisionCallback,
  type FrameworkApprovals,
  type HookbusDecisionEvent,
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
  decideToolCall,
  decidedInput,
  decideToolResult,
  observeToolCall,
  reportToolResult,
  runGatedToolCall,
  toolResultText,
  type ToolCallRef,
  type ToolGateOptions,
  type ToolOutcome,
  type ToolResultReplacement,
  type ToolRun,
} from "./tool-call.js";
export {
  answerToolApproval,
  approvalCallId,
  approvalReason,
  askToolApproval,
  denyToolApproval,
  toolApprovalId,
  type PendingToolApproval,
  type ToolApprovalAnswer,
} from "./approval.js";
export { importPeer } from "./peer.js";
export {
  askAfterLlmCall,
  decideAfterLlmCall,
  decideLlmCall,
  parseToolArguments,
  type AfterLlmCallEvent,
  type LlmCallDecision,
  type LlmCallEvent,
} from "./llm-call.js";
export { decideResponse } from "./response.js";
export { askHook, type AskHookOptions } from "./decide.js";
export { decideAgentReply, lastUserText } from "./agent-reply.js";
export {
  observeLlmInput,
  observeLlmOutput,
  type LlmInputFields,
  type LlmOutputFields,
  type LlmUsage,
} from "./llm-observe.js";
