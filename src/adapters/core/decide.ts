/**
 * Every modifying hook an adapter asks goes through `askHook`, so each decision the adapter
 * obtains reaches the run's `onDecision` exactly once, whatever the framework.
 */
import { HookbusBlockedError } from "../../agent/blocked.js";
import type { CallOptions } from "../../agent/types.js";
import type { Decision, ModifyingHookName } from "../../catalog/catalog.js";
import type { HookContextInput, HookEventInput } from "../../catalog/input.js";
import type { HookbusRun } from "./run.js";

export interface AskHookOptions {
  call?: CallOptions;
  /** Throw HookbusBlockedError on a block (the typed client methods' behaviour). Default true. */
  throwOnBlock?: boolean;
  /** The tool call a tool hook is about (reported to `onDecision`). */
  tool?: { toolName: string; toolCallId: string | undefined };
}

/**
 * Ask `hook` for `run` and report the decision. Synchronous up to the client's gate (like the
 * client's own methods): a before_tool_call started after an after_llm_call asked here waits for it.
 */
export function askHook<H extends ModifyingHookName>(
  run: HookbusRun,
  hook: H,
  ctx: HookContextInput<H>,
  event: HookEventInput<H>,
  options: AskHookOptions = {},
): Promise<Decision<H>> {
  return run.client.call(hook, ctx, event, options.call).then((result) => {
    run.reportDecision({
      hook,
      decision: result.decision,
      source: result.source,
      ...(result.callId === undefined ? {} : { callId: result.callId }),
      ...toolFields(options.tool),
    });
    if (options.throwOnBlock !== false && result.decision.outcome === "block") {
      throw new HookbusBlockedError(
        hook,
        result.decision,
        result.source === "after_llm_call_gate" ? "after_llm_call_gate" : "decision",
      );
    }
    return result.decision;
  });
}

/** The `onDecision` fields of a tool call. */
export function toolFields(
  tool: { toolName: string; toolCallId: string | undefined } | undefined,
): { toolName?: string; toolCallId?: string } {
  if (tool === undefined) return {};
  return {
    toolName: tool.toolName,
    ...(tool.toolCallId === undefined ? {} : { toolCallId: tool.toolCallId }),
  };
}
