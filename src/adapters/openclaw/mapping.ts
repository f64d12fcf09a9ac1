/**
 * OpenClaw hooks ↔ hookbus hooks, both ways, as pure functions (plugin.ts does the I/O).
 *
 * | OpenClaw (2026.9)                      | hookbus                      | what a decision can do                        |
 * |----------------------------------------|------------------------------|-----------------------------------------------|
 * | before_agent_reply (claim)             | before_agent_reply           | answer instead of the agent (`reply`)         |
 * | before_tool_call (gate)                | before_tool_call             | block; rewrite the params                     |
 * | tool-result middleware                 | before_tool_result           | replace or withhold what the model reads      |
 * | after_tool_call                        | after_tool_call (observed)   |                                               |
 * | message_sending (outbound delivery)    | before_response_emit         | rewrite the delivered text; cancel the send   |
 * | llm_input, llm_output, agent_end       | observed                     |                                               |
 * | session_start, session_end             | observed                     |                                               |
 *
 * Not carried (docs/adapters/openclaw.md): after_llm_call (OpenClaw has no point between the model's
 * answer and its tool calls where a plugin may drop calls) and a per-call before_llm_call
 * (llm_input is an observation, once per run, not per model call).
 */
import type { Decision } from "../../catalog/catalog.js";
import { toolInputFromParams } from "../../catalog/common.js";
import type { HookbusError } from "../../foundation/errors.js";
import type {
  OpenClawBeforeAgentReplyResult,
  OpenClawBeforeToolCallResult,
  OpenClawHookContext,
  OpenClawMessageSendingResult,
  OpenClawToolResult,
} from "./host.js";

/**
 * A session key for hooks that fire without one: OpenClaw documents `sessionKey` (and
 * `sessionId`) as optional on many hooks. hookbus needs a session; such calls share this one.
 */
export const NO_SESSION = "openclaw:no-session";

/** What identifies a call: hookbus's agent (from the config) and OpenClaw's session and run. */
export function runContext(
  agentId: string,
  ctx: OpenClawHookContext | undefined,
  runId?: string,
): {
  agentId: string;
  sessionKey: string;
  runId?: string;
  channel?: string;
  openclawAgentId?: string;
} {
  const run = ctx?.runId ?? runId;
  const channel = ctx?.channel ?? ctx?.messageProvider ?? ctx?.channelId;
  return {
    agentId,
    sessionKey: ctx?.sessionKey ?? ctx?.sessionId ?? NO_SESSION,
    ...(run === undefined ? {} : { runId: run }),
    ...(channel === undefined ? {} : { channel }),
    ...(ctx?.agentId === undefined ? {} : { openclawAgentId: ctx.agentId }),
  };
}

/** Why hookbus could not decide, for the user or the model to read. */
export function undecided(error: HookbusError): string {
  return `hookbus could not decide (${error.code}): ${error.message}`;
}

export function answerAgentReply(
  decision: Decision<"before_agent_reply">,
): OpenClawBeforeAgentReplyResult | undefined {
  if (decision.outcome === "block") {
    return {
      handled: true,
      reply: { text: decision.blockReason ?? "blocked by policy" },
      reason: decision.blockReason ?? "blocked",
    };
  }
  if (decision.reply === undefined) return undefined;
  return {
    handled: true,
    reply: { text: decision.reply.text },
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
  };
}

/** Fail closed: a turn hookbus cannot check is answered with why, and the agent does not run. */
export function failAgentReply(error: HookbusError): OpenClawBeforeAgentReplyResult {
  const why = `${undecided(error)}; the message was not handed to the agent (fail closed)`;
  return { handled: true, reply: { text: why }, reason: why };
}

export function answerToolCall(
  params: Record<string, unknown>,
  decision: Decision<"before_tool_call">,
): OpenClawBeforeToolCallResult | undefined {
  if (decision.outcome === "block")
    return { block: true, blockReason: decision.blockReason ?? "blocked by policy" };
  if (decision.params === undefined) return undefined;
  // OpenClaw's tool input is always an object, so the rewrite is too.
  const rewritten = toolInputFromParams(params, decision.params);
  return { params: rewritten as Record<string, unknown> };
}

/** Fail closed: a tool call hookbus cannot check never runs. */
export function failToolCall(error: HookbusError): OpenClawBeforeToolCallResult {
  return {
    block: true,
    blockReason: `${undecided(error)}; the tool call is refused (fail closed)`,
  };
}

/** A tool result the model reads instead: text only, with why in `details` for the transcript. */
function replacedResult(text: string, why: string): { result: OpenClawToolResult } {
  return { result: { content: [{ type: "text", text }], details: { hookbus: why } } };
}

function contentText(content: string | { type: string; [k: string]: unknown }[]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part.text === "string" ? part.text : "")).join("");
}

export function answerToolResult(
  decision: Decision<"before_tool_result">,
): { result: OpenClawToolResult } | undefined {
  if (decision.outcome === "block") {
    const reason = decision.blockReason ?? "blocked by policy";
    return replacedResult(`the tool's result was withheld: ${reason}`, `withheld: ${reason}`);
  }
  if (decision.content === undefined) return undefined;
  return replacedResult(contentText(decision.content), "replaced by policy");
}

/** Fail closed: a result hookbus cannot check never reaches the model. */
export function failToolResult(error: HookbusError): { result: OpenClawToolResult } {
  const why = `${undecided(error)}; the tool's result was withheld (fail closed)`;
  return replacedResult(why, why);
}

export function answerMessageSending(
  content: string,
  decision: Decision<"before_response_emit">,
): OpenClawMessageSendingResult | undefined {
  if (decision.outcome === "block")
    return { cancel: true, cancelReason: decision.blockReason ?? "blocked by policy" };
  const replaced = decision.content ?? decision.allContent?.[0];
  if (decision.allContent !== undefined && decision.allContent.length === 0)
    return { cancel: true, cancelReason: "a policy removed the reply (allContent: [])" };
  if (replaced === undefined || replaced === content) return undefined;
  if (replaced === "") return { cancel: true, cancelReason: "a policy emptied the reply" };
  return { content: replaced };
}

/** Fail closed: a reply hookbus cannot check is not delivered. */
export function failMessageSending(error: HookbusError): OpenClawMessageSendingResult {
  return { cancel: true, cancelReason: `${undecided(error)}; not delivered (fail closed)` };
}
