/**
 * The part of OpenClaw's plugin API this plugin uses, typed structurally (OpenClaw 2026.9,
 * `openclaw/plugin-sdk/plugin-entry`). hookbus does not depend on the `openclaw` package (it is
 * large and only the plugin needs it), so these are the shapes OpenClaw passes, not its types;
 * every field OpenClaw documents as optional is optional here too.
 */

/** The context OpenClaw passes to agent, tool and session hooks (all fields optional there). */
export interface OpenClawHookContext {
  agentId?: string;
  sessionKey?: string;
  sessionId?: string;
  runId?: string;
  channel?: string;
  channelId?: string;
  messageProvider?: string;
  toolName?: string;
  toolCallId?: string;
  trigger?: string;
}

export interface OpenClawBeforeAgentReplyEvent {
  cleanedBody: string;
}
export interface OpenClawBeforeAgentReplyResult {
  handled: boolean;
  reply?: { text: string };
  reason?: string;
}

export interface OpenClawBeforeToolCallEvent {
  toolName: string;
  params: Record<string, unknown>;
  runId?: string;
  toolCallId?: string;
}
export interface OpenClawBeforeToolCallResult {
  params?: Record<string, unknown>;
  block?: boolean;
  blockReason?: string;
}

export interface OpenClawAfterToolCallEvent {
  toolName: string;
  params: Record<string, unknown>;
  runId?: string;
  toolCallId?: string;
  result?: unknown;
  error?: string;
  durationMs?: number;
}

/** A tool's result as OpenClaw's agent loop holds it (pi-agent-core's AgentToolResult). */
export interface OpenClawToolResult {
  content: { type: string; text?: string; [k: string]: unknown }[];
  details?: unknown;
  [k: string]: unknown;
}
export interface OpenClawToolResultEvent {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  isError?: boolean;
  result: OpenClawToolResult;
}
export interface OpenClawToolResultContext {
  runtime: string;
  agentId?: string;
  sessionId?: string;
  sessionKey?: string;
  runId?: string;
}

export interface OpenClawMessageSendingEvent {
  to: string;
  content: string;
}
export interface OpenClawMessageContext {
  channelId: string;
  accountId?: string;
  conversationId?: string;
  sessionKey?: string;
  runId?: string;
}
export interface OpenClawMessageSendingResult {
  content?: string;
  cancel?: boolean;
  cancelReason?: string;
}

export interface OpenClawLlmInputEvent {
  runId: string;
  sessionId: string;
  provider: string;
  model: string;
  systemPrompt?: string;
  prompt: string;
  historyMessages: unknown[];
  imagesCount: number;
}
export interface OpenClawLlmOutputEvent {
  runId: string;
  sessionId: string;
  provider: string;
  model: string;
  assistantTexts: string[];
  usage?: Record<string, number | undefined>;
}
export interface OpenClawAgentEndEvent {
  runId?: string;
  messages: unknown[];
  success: boolean;
  error?: string;
  durationMs?: number;
}
export interface OpenClawSessionStartEvent {
  sessionId: string;
  sessionKey?: string;
  resumedFrom?: string;
}
export interface OpenClawSessionEndEvent {
  sessionId: string;
  sessionKey?: string;
  messageCount: number;
  durationMs?: number;
  reason?: string;
}

type Handler<E, C, R> = (event: E, ctx: C) => R | void | Promise<R | void>;

/** OpenClaw's typed hooks this plugin registers, with their event, context and result. */
export interface OpenClawHooks {
  before_agent_reply: Handler<
    OpenClawBeforeAgentReplyEvent,
    OpenClawHookContext,
    OpenClawBeforeAgentReplyResult
  >;
  before_tool_call: Handler<
    OpenClawBeforeToolCallEvent,
    OpenClawHookContext,
    OpenClawBeforeToolCallResult
  >;
  after_tool_call: Handler<OpenClawAfterToolCallEvent, OpenClawHookContext, never>;
  message_sending: Handler<
    OpenClawMessageSendingEvent,
    OpenClawMessageContext,
    OpenClawMessageSendingResult
  >;
  llm_input: Handler<OpenClawLlmInputEvent, OpenClawHookContext, never>;
  llm_output: Handler<OpenClawLlmOutputEvent, OpenClawHookContext, never>;
  agent_end: Handler<OpenClawAgentEndEvent, OpenClawHookContext, never>;
  session_start: Handler<OpenClawSessionStartEvent, OpenClawHookContext, never>;
  session_end: Handler<OpenClawSessionEndEvent, OpenClawHookContext, never>;
  gateway_stop: Handler<unknown, unknown, never>;
}

export interface OpenClawLogger {
  info?(message: string): void;
  warn?(message: string): void;
  error?(message: string): void;
}

/** `api` of `register(api)`: what this plugin calls. */
export interface OpenClawPluginApi {
  pluginConfig?: unknown;
  logger?: OpenClawLogger;
  on<K extends keyof OpenClawHooks>(
    hook: K,
    handler: OpenClawHooks[K],
    options?: { priority?: number; timeoutMs?: number },
  ): void;
  registerAgentToolResultMiddleware?(
    handler: (
      event: OpenClawToolResultEvent,
      ctx: OpenClawToolResultContext,
    ) => Promise<{ result: OpenClawToolResult } | void>,
    options?: { runtimes?: ("openclaw" | "codex")[] },
  ): void;
}
