/**
 * Claude Code hook events ↔ hookbus hooks, both ways, as pure functions (the runner does the I/O).
 *
 * | Claude Code          | hookbus                                   | what the decision can do            |
 * |----------------------|-------------------------------------------|-------------------------------------|
 * | PreToolUse           | before_tool_call                          | deny; rewrite the input (updatedInput) |
 * | PostToolUse, mcp__*  | before_tool_result                        | replace or withhold the MCP output  |
 * | PostToolUse, other   | after_tool_call (observed)                | nothing: Claude Code cannot change built-in tools' output |
 * | PostToolUseFailure   | after_tool_call with `error` (observed)   |                                     |
 * | UserPromptSubmit     | before_agent_reply                        | refuse the prompt, with the reply shown to the user |
 * | Stop                 | before_response_emit                      | refuse the answer (Claude continues with the reason); it cannot unsend text already shown |
 * | SessionStart/End     | session_start / session_end (observed)    |                                     |
 */
import type { Decision, HookContext, HookEvent } from "../../catalog/catalog.js";
import type { HookbusError } from "../../foundation/errors.js";
import type { ClaudeCodeEventName, ClaudeCodeHookInput } from "./input.js";

/** What a command hook prints on stdout (exit 0) for Claude Code to act on. */
export interface ClaudeCodeHookOutput {
  continue?: boolean;
  stopReason?: string;
  systemMessage?: string;
  decision?: "block";
  reason?: string;
  hookSpecificOutput?: {
    hookEventName: ClaudeCodeEventName;
    permissionDecision?: "allow" | "deny" | "ask";
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    updatedMCPToolOutput?: unknown;
  };
}

export interface MappingOptions {
  /** The agent this Claude Code installation calls as (the NATS user's subject token). */
  agentId: string;
  /**
   * What to answer Claude Code for a call whose input a policy rewrote: `allow` runs it without
   * Claude Code's permission prompt (its deny and ask rules still apply), `ask` shows the
   * rewritten input to the user first.
   */
  rewriteDecision: "allow" | "ask";
}

type Decided<
  H extends
    "before_tool_call" | "before_tool_result" | "before_agent_reply" | "before_response_emit",
> = {
  kind: "decide";
  hook: H;
  context: HookContext<H>;
  event: HookEvent<H>;
};
type Observed<H extends "after_tool_call" | "session_start" | "session_end"> = {
  kind: "observe";
  hook: H;
  context: HookContext<H>;
  event: HookEvent<H>;
};

export type Plan =
  | Decided<"before_tool_call">
  | Decided<"before_tool_result">
  | Decided<"before_agent_reply">
  | Decided<"before_response_emit">
  | Observed<"after_tool_call">
  | Observed<"session_start">
  | Observed<"session_end">;

/** Claude Code lets a PostToolUse hook replace the output of MCP tools only. */
export function isMcpTool(toolName: string): boolean {
  return toolName.startsWith("mcp__");
}

/**
 * Claude Code has no run id: a session is one long run, so its session id is both. The gate of
 * after_llm_call is never used (Claude Code exposes no point between the model's answer and its
 * tool calls), so nothing is lost by that.
 */
function contextOf(input: ClaudeCodeHookInput, options: MappingOptions, toolCallId?: string) {
  return {
    agentId: options.agentId,
    sessionKey: input.session_id,
    runId: input.session_id,
    channel: "claude-code",
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}

/** Where the hook fired: policies may confine tools to a project folder or a permission mode. */
function whereFields(input: ClaudeCodeHookInput) {
  return {
    ...(input.cwd === undefined ? {} : { cwd: input.cwd }),
    ...(input.permission_mode === undefined ? {} : { permissionMode: input.permission_mode }),
  };
}

type ToolInput = Extract<ClaudeCodeHookInput, { tool_name: string }>;

/** The fields every tool event shares: the tool, its call id when Claude Code gave one, its input. */
function toolFields(input: ToolInput) {
  return {
    toolName: input.tool_name,
    ...(input.tool_use_id === undefined ? {} : { toolCallId: input.tool_use_id }),
    params: input.tool_input,
  };
}

type InputOf<E extends ClaudeCodeEventName> = Extract<ClaudeCodeHookInput, { hook_event_name: E }>;

/** `texts`: the assistant texts of the turn, for Stop (from the input or the transcript). */
export function planFor(
  input: ClaudeCodeHookInput,
  options: MappingOptions,
  texts: string[] = [],
): Plan {
  switch (input.hook_event_name) {
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure":
      return toolPlan(input, options);
    case "UserPromptSubmit":
    case "Stop":
      return turnPlan(input, options, texts);
    case "SessionStart":
    case "SessionEnd":
      return sessionPlan(input, options);
  }
}

/** A tool about to run (gated), or one that ran (its MCP output reviewed, else observed). */
function toolPlan(
  input: InputOf<"PreToolUse" | "PostToolUse" | "PostToolUseFailure">,
  options: MappingOptions,
): Plan {
  const context = contextOf(input, options, input.tool_use_id);
  switch (input.hook_event_name) {
    case "PreToolUse":
      return {
        kind: "decide",
        hook: "before_tool_call",
        context,
        event: { ...toolFields(input), ...whereFields(input) },
      };
    case "PostToolUse":
      if (isMcpTool(input.tool_name))
        return {
          kind: "decide",
          hook: "before_tool_result",
          context,
          event: {
            ...toolFields(input),
            result: input.tool_response,
            isError: false,
            ...whereFields(input),
          },
        };
      return {
        kind: "observe",
        hook: "after_tool_call",
        context,
        event: { ...toolFields(input), result: input.tool_response, ...whereFields(input) },
      };
    case "PostToolUseFailure":
      return {
        kind: "observe",
        hook: "after_tool_call",
        context,
        event: {
          ...toolFields(input),
          error:
            typeof input.error === "string" ? input.error : JSON.stringify(input.error ?? null),
          ...whereFields(input),
        },
      };
  }
}

/** The user's prompt (before_agent_reply) and the turn's answer (before_response_emit). */
function turnPlan(
  input: InputOf<"UserPromptSubmit" | "Stop">,
  options: MappingOptions,
  texts: string[],
): Plan {
  if (input.hook_event_name === "UserPromptSubmit")
    return {
      kind: "decide",
      hook: "before_agent_reply",
      context: contextOf(input, options),
      event: { cleanedBody: input.prompt, ...whereFields(input) },
    };
  return {
    kind: "decide",
    hook: "before_response_emit",
    context: contextOf(input, options),
    event: {
      content: texts.at(-1) ?? "",
      allContent: texts,
      channel: "claude-code",
      ...whereFields(input),
    },
  };
}

function sessionPlan(input: InputOf<"SessionStart" | "SessionEnd">, options: MappingOptions): Plan {
  if (input.hook_event_name === "SessionStart")
    return {
      kind: "observe",
      hook: "session_start",
      context: contextOf(input, options),
      event: {
        sessionId: input.session_id,
        ...(input.source === undefined ? {} : { source: input.source }),
      },
    };
  return {
    kind: "observe",
    hook: "session_end",
    context: contextOf(input, options),
    event: {
      sessionId: input.session_id,
      ...(input.reason === undefined ? {} : { reason: input.reason }),
    },
  };
}

/**
 * What the model and the user read: no error class names (`HookbusError: …` from a policy that
 * failed is noise to the model), the message kept.
 */
export function readerText(text: string): string {
  return text.replace(/\b(?:[A-Z][A-Za-z]*)?Error: /g, "");
}

/** Whether `reason` names `policy` as a word of its own (`tool-policy` is not named by `policy`). */
function namesPolicy(reason: string, policy: string): boolean {
  const name = policy.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\w-])${name}($|[^\\w-])`).test(reason);
}

/** `hookbus (policy): reason`, naming the policy once: not again when the reason already does. */
function namedReason(policies: readonly string[], reason: string): string {
  const unnamed = policies.filter((policy) => !namesPolicy(reason, policy));
  const text = readerText(reason);
  return unnamed.length === 0 ? `hookbus: ${text}` : `hookbus (${unnamed.join(", ")}): ${text}`;
}

function blockText(decision: { blockReason?: string | undefined; blockedBy?: string | undefined }) {
  return namedReason(
    decision.blockedBy === undefined ? [] : [decision.blockedBy],
    decision.blockReason ?? "blocked by policy",
  );
}

/** Keys of the original input that a rewrite dropped. */
function droppedKeys(
  original: Record<string, unknown>,
  rewritten: Record<string, unknown>,
): string[] {
  return Object.keys(original).filter((key) => !Object.hasOwn(rewritten, key));
}

export function answerToolCall(
  input: Extract<ClaudeCodeHookInput, { hook_event_name: "PreToolUse" }>,
  decision: Decision<"before_tool_call">,
  options: MappingOptions,
): ClaudeCodeHookOutput {
  const deny = (reason: string): ClaudeCodeHookOutput => ({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: reason,
    },
  });
  if (decision.outcome === "block") return deny(blockText(decision));
  if (decision.params === undefined) return {};
  // Some hosts merge updatedInput over the original input: a field a policy removed would then
  // survive. A removal cannot be expressed safely, so it is refused rather than half applied.
  const dropped = droppedKeys(input.tool_input, decision.params);
  if (dropped.length > 0)
    return deny(
      `hookbus: a policy removed ${dropped.map((k) => JSON.stringify(k)).join(", ")} from the tool input, which a Claude Code hook cannot express safely; the call is refused`,
    );
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: options.rewriteDecision,
      permissionDecisionReason: `hookbus: input rewritten by ${(decision.decidedBy.params ?? []).join(", ") || "policy"}`,
      updatedInput: decision.params,
    },
  };
}

export function answerToolResult(decision: Decision<"before_tool_result">): ClaudeCodeHookOutput {
  if (decision.outcome === "block") {
    const reason = blockText(decision);
    return {
      decision: "block",
      reason,
      hookSpecificOutput: {
        hookEventName: "PostToolUse",
        updatedMCPToolOutput: `[tool output withheld] ${reason}`,
      },
    };
  }
  if (decision.content === undefined) return {};
  return {
    hookSpecificOutput: { hookEventName: "PostToolUse", updatedMCPToolOutput: decision.content },
  };
}

export function answerPrompt(decision: Decision<"before_agent_reply">): ClaudeCodeHookOutput {
  // Claude Code erases a refused prompt and shows `reason` to the user: the synthetic reply.
  if (decision.outcome === "reply" && decision.reply !== undefined)
    return { decision: "block", reason: decision.reply.text };
  if (decision.outcome === "block") return { decision: "block", reason: blockText(decision) };
  return {};
}

/**
 * Claude Code streams the answer before Stop fires, so a Stop hook cannot redact it. What it can
 * do: refuse to let the turn end (Claude continues, told why, and can correct itself), and, when
 * it already did that once (`stop_hook_active`), stop the session with the reason shown.
 */
export function answerStop(
  input: Extract<ClaudeCodeHookInput, { hook_event_name: "Stop" }>,
  decision: Decision<"before_response_emit">,
): ClaudeCodeHookOutput {
  const changed = decision.content !== undefined || decision.allContent !== undefined;
  if (decision.outcome !== "block" && !changed) return {};
  const editors = [
    ...new Set([...(decision.decidedBy.content ?? []), ...(decision.decidedBy.allContent ?? [])]),
  ];
  const reason =
    decision.outcome === "block"
      ? blockText(decision)
      : namedReason(
          editors.length === 0 ? ["policy"] : editors,
          "the answer may not be delivered as written",
        );
  if (input.stop_hook_active === true)
    return { continue: false, stopReason: reason, systemMessage: reason };
  return {
    decision: "block",
    reason: `${reason}. Do not repeat that content; answer again without it.`,
    systemMessage: reason,
  };
}

/**
 * The answer when hookbus could not decide (NATS unreachable, a timeout, bad input): gates fail
 * closed, observations warn. `name` is undefined when the input named no known event.
 */
export function answerFailure(
  name: ClaudeCodeEventName,
  toolName: string | undefined,
  error: HookbusError,
): ClaudeCodeHookOutput {
  const why = `hookbus could not decide (${error.code}): ${readerText(error.message)}`;
  switch (name) {
    case "PreToolUse":
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: `${why}; the tool call is refused (fail closed)`,
        },
      };
    case "PostToolUse":
      if (toolName !== undefined && isMcpTool(toolName))
        return {
          decision: "block",
          reason: `${why}; the tool output is withheld (fail closed)`,
          hookSpecificOutput: {
            hookEventName: "PostToolUse",
            updatedMCPToolOutput: `[tool output withheld] ${why}`,
          },
        };
      return { systemMessage: `${why}; this tool call was not recorded` };
    case "UserPromptSubmit":
      return { decision: "block", reason: `${why}; the prompt is refused (fail closed)` };
    case "Stop":
      return { continue: false, stopReason: `${why}; stopping (fail closed)`, systemMessage: why };
    case "PostToolUseFailure":
    case "SessionStart":
    case "SessionEnd":
      return { systemMessage: `${why}; this event was not recorded` };
  }
}
