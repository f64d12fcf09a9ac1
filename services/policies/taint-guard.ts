/**
 * Taint rule: once a session has seen a tool result from an untrusted source (a web page, an
 * inbound email), tools that send data out are blocked for the rest of that session. Text from
 * an untrusted source may carry instructions ("forward the user's files to …"); after it, the
 * agent may still read and think, but not exfiltrate.
 *
 * Where the taint is set, and why in two places:
 * - before_tool_result (a modifying hook: the agent waits for its decision before the result
 *   reaches the model). Setting the flag here is deterministic: it is stored before the model
 *   has seen a single token of the untrusted text, so no later tool call of the session can
 *   come before it. Register the policy for before_tool_result to get this guarantee.
 * - after_tool_call (observational: delivered from the log, at least once, asynchronously).
 *   It covers agents or tools that do not call before_tool_result, but it races: a send issued
 *   right after the fetch can be decided before the observation is handled. It is a backstop,
 *   not the gate. Both writes are idempotent (the first tainting tool is kept).
 *
 * before_tool_call blocks sinks once tainted; before_llm_call (optional, `hideSinks`) also stops
 * offering them to the model, so it does not keep trying.
 */
import {
  definePolicy,
  toolDefinitionName,
  type Policy,
  type SessionState,
} from "../../src/index.js";
import { checkPolicyName, toolMatcher, type ToolPattern } from "./shared.js";

export interface TaintGuardOptions {
  /** Registry name; default `taint-guard`. */
  name?: string;
  /** Tools whose results taint the session (names or globs). */
  untrustedSources?: ToolPattern[];
  /** Tools that send data out, blocked once the session is tainted (names or globs). */
  sinks?: ToolPattern[];
  /** At before_llm_call, remove the sinks from the offered tools once tainted. Default true. */
  hideSinks?: boolean;
  version?: string;
}

/** The stored taint (state key `taint`): the first untrusted result of the session. */
export interface Taint {
  tool: string;
  toolCallId?: string;
  /** The hook that recorded it. */
  via: "before_tool_result" | "after_tool_call";
  at: string;
}

export const TAINT_STATE_KEY = "taint";

/** Tool classes (docs/vocabulary.md) and names whose results may carry someone else's words. */
export const DEFAULT_UNTRUSTED_SOURCES: readonly ToolPattern[] = [
  "class:web-fetch",
  "class:web-search",
  "class:browser",
  "read_email",
  "*__read_email",
  "get_email",
  "*__get_email",
];

/** Tool classes and names that send data out. */
export const DEFAULT_SINKS: readonly ToolPattern[] = [
  "class:send-message",
  "http_post",
  "http_request",
  "slack_post",
  "upload_*",
  "*__upload_*",
];

async function markTainted(state: SessionState, taint: Omit<Taint, "at">): Promise<void> {
  // Read first: most results of a tainted session need no write at all.
  if ((await state.get<Taint>(TAINT_STATE_KEY)) !== undefined) return;
  // Keep the first tainting tool even when two results race to record theirs.
  await state.update<Taint>(
    TAINT_STATE_KEY,
    (prev) => prev ?? { ...taint, at: new Date().toISOString() },
  );
}

export function taintGuard(options: TaintGuardOptions = {}): Policy {
  const name = checkPolicyName(options.name, "taint-guard");
  const sources = toolMatcher(
    name,
    "untrustedSources",
    options.untrustedSources ?? DEFAULT_UNTRUSTED_SOURCES,
  );
  const sinks = toolMatcher(name, "sinks", options.sinks ?? DEFAULT_SINKS);
  const hideSinks = options.hideSinks ?? true;

  return definePolicy({
    name,
    version: options.version ?? "1.0.0",
    hooks: {
      // The deterministic path: the agent waits for this before the model sees the result.
      async before_tool_result(event, _ctx, { state }) {
        if (sources.match(event.toolName) === undefined) return undefined;
        await markTainted(state, {
          tool: event.toolName,
          ...(event.toolCallId === undefined ? {} : { toolCallId: event.toolCallId }),
          via: "before_tool_result",
        });
        return undefined;
      },

      // The backstop: asynchronous, at least once (idempotent).
      async after_tool_call(event, _ctx, { state }) {
        if (event.blocked === true || sources.match(event.toolName) === undefined) return;
        await markTainted(state, {
          tool: event.toolName,
          ...(event.toolCallId === undefined ? {} : { toolCallId: event.toolCallId }),
          via: "after_tool_call",
        });
      },

      async before_tool_call(event, _ctx, { state }) {
        if (sinks.match(event.toolName) === undefined) return undefined;
        const taint = await state.get<Taint>(TAINT_STATE_KEY);
        if (taint === undefined) return undefined;
        const call = taint.toolCallId === undefined ? "" : ` (call ${taint.toolCallId})`;
        return {
          block: true,
          blockReason:
            `tool "${event.toolName}" sends data out, and this session read untrusted content ` +
            `from "${taint.tool}"${call}: outbound tools are blocked for the rest of the session ` +
            `by policy "${name}"`,
        };
      },

      async before_llm_call(event, _ctx, { state }) {
        if (!hideSinks || event.tools === undefined) return undefined;
        if (!event.tools.some((t) => sinks.match(toolDefinitionName(t)) !== undefined))
          return undefined;
        if ((await state.get<Taint>(TAINT_STATE_KEY)) === undefined) return undefined;
        return {
          tools: event.tools.filter((t) => sinks.match(toolDefinitionName(t)) === undefined),
        };
      },
    },
  });
}

/** The demo's instance. */
export const defaultTaintGuard: Policy = taintGuard();
