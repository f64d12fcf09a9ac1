/**
 * Per-session tool budget: at most N calls of a tool (or of a group of tools) per session,
 * enforced at before_tool_call on the SDK's session state.
 *
 * `limits` maps a tool name or glob to the calls allowed per session. Each entry is one budget,
 * shared by every tool it matches (`"mcp__github__*": 20` is 20 GitHub calls in all, `"*": 100`
 * is 100 tool calls in all). A call draws one unit from every budget that matches its tool, and
 * is allowed only when all of them have room; a refused call draws nothing.
 *
 * The counters live in one state value per session, updated with `state.update` (a
 * compare-and-set loop in KV): any number of workers, on any number of machines, hand out
 * exactly N allowances, and a restarted worker continues from the stored counts. The decision is
 * written into the value itself (`last`), so the worker reads its own decision from the value its
 * compare-and-set committed, never from a retry that lost.
 */
import { definePolicy, type Policy } from "../../src/index.js";
import { checkPolicyName, configError, toolMatcher, type ToolPattern } from "./shared.js";

export interface SessionBudgetOptions {
  /** Registry name; default `session-budget`. */
  name?: string;
  /** Calls allowed per session, by tool name or glob. Each entry is a budget of its own. */
  limits: Record<ToolPattern, number>;
  /**
   * Remember this many recently allowed tool call ids per session, so that a retried
   * before_tool_call for an id that was already allowed is allowed again without drawing from the
   * budget. Default 0 (off): a retry then counts again, which errs on the strict side. Turn it on
   * only when the agent's tool call ids are unique within a session (OpenAI and Anthropic ids
   * are; some local model servers number calls `call_0`, `call_1` in every response, and a reused
   * id would then be a free call).
   */
  rememberCallIds?: number;
  version?: string;
}

/** The stored state of one session (key `usage`). */
export interface BudgetUsage {
  /** Calls allowed so far, per `limits` entry. */
  counts: Record<string, number>;
  /** Recently allowed tool call ids (for retries), oldest first. */
  recent: string[];
  /** The decision of the update that wrote this value. */
  last: { callId: string; allowed: boolean; budget?: string; retry?: boolean };
}

export const BUDGET_STATE_KEY = "usage";

export function sessionBudget(options: SessionBudgetOptions): Policy {
  const name = checkPolicyName(options?.name, "session-budget");
  const limits = options?.limits;
  if (typeof limits !== "object" || limits === null || Object.keys(limits).length === 0) {
    throw configError(name, "limits must map at least one tool name or glob to a call count");
  }
  for (const [pattern, limit] of Object.entries(limits)) {
    if (!Number.isInteger(limit) || limit < 0) {
      throw configError(
        name,
        `limits["${pattern}"] must be a whole number ≥ 0, got ${String(limit)}`,
      );
    }
  }
  const remember = options.rememberCallIds ?? 0;
  if (!Number.isInteger(remember) || remember < 0) {
    throw configError(name, "rememberCallIds must be a whole number ≥ 0");
  }
  // One matcher per entry: a tool may draw from several budgets.
  const budgets = Object.entries(limits).map(([pattern, limit]) => ({
    pattern,
    limit,
    matcher: toolMatcher(name, `limits["${pattern}"]`, [pattern]),
  }));

  return definePolicy({
    name,
    version: options.version ?? "1.0.0",
    hooks: {
      async before_tool_call(event, _ctx, { state, callId, logger }) {
        const applicable = budgets.filter((b) => b.matcher.match(event.toolName) !== undefined);
        if (applicable.length === 0) return undefined;
        const toolCallId = event.toolCallId;

        const usage = await state.update<BudgetUsage>(BUDGET_STATE_KEY, (prev) => {
          const counts = { ...prev?.counts };
          const recent = [...(prev?.recent ?? [])];
          if (toolCallId !== undefined && remember > 0 && recent.includes(toolCallId)) {
            return { counts, recent, last: { callId, allowed: true, retry: true } };
          }
          const full = applicable.find((b) => (counts[b.pattern] ?? 0) >= b.limit);
          if (full !== undefined) {
            return { counts, recent, last: { callId, allowed: false, budget: full.pattern } };
          }
          for (const b of applicable) counts[b.pattern] = (counts[b.pattern] ?? 0) + 1;
          if (toolCallId !== undefined && remember > 0) {
            recent.push(toolCallId);
            if (recent.length > remember) recent.splice(0, recent.length - remember);
          }
          return { counts, recent, last: { callId, allowed: true } };
        });

        if (usage.last.callId !== callId) {
          // The store returned someone else's write: never guess, refuse (fail closed).
          throw new Error("session state returned a value this call did not write");
        }
        if (usage.last.allowed) return undefined;
        const budget = budgets.find((b) => b.pattern === usage.last.budget)!;
        const subject =
          budget.pattern === event.toolName
            ? `tool "${event.toolName}"`
            : `tool "${event.toolName}" (budget "${budget.pattern}")`;
        logger.info(
          { tool: event.toolName, budget: budget.pattern, limit: budget.limit },
          "budget exhausted",
        );
        return {
          block: true,
          blockReason: `${subject} has used all ${budget.limit} calls allowed per session by policy "${name}"`,
        };
      },
    },
  });
}

/** The demo's instance. */
export const defaultSessionBudget: Policy = sessionBudget({
  limits: { web_search: 20, web_fetch: 20, send_email: 3, exec: 10, "*": 100 },
});
