/**
 * after_llm_call for a model answer, whatever the framework: asked before any of the answer's
 * tool calls can start, so the client's gate holds them until the decision.
 */
import type { Decision } from "../../catalog/catalog.js";
import type { HookEventInput } from "../../catalog/input.js";
import type { HookbusRun } from "./run.js";

/**
 * Ask after_llm_call. The client opens the run's gate synchronously, before this returns: tool
 * calls started later wait for the decision. With tool calls, a failed call is not thrown (it
 * resolves undefined): the gate holds the failure and refuses this turn's tool calls (fail
 * closed). Without tool calls there is nothing to hold, so the failure is thrown.
 */
export function decideAfterLlmCall(
  run: HookbusRun,
  event: HookEventInput<"after_llm_call">,
): Promise<Decision<"after_llm_call"> | undefined> {
  return run.client.decide("after_llm_call", run.context, event).catch((error: unknown) => {
    if (event.toolCalls.length === 0) throw error;
    return undefined;
  });
}
