/**
 * Attach hookbus to a pi `Agent`: its `streamFn` is wrapped (src/adapters/pi/stream.ts) and its
 * `beforeToolCall`/`afterToolCall` hooks go through the tool gates (src/adapters/pi/tools.ts).
 * The agent's own hooks, if it had any, still run: after hookbus allowed a call (before), and
 * before hookbus checks the result the model will see (after).
 *
 * The agent is configured once; each `prompt()` runs inside `withHookbusRun`, which is how every
 * call finds its agent, session and run (a pi Agent is often one per session, but nothing here
 * assumes it).
 */
import type { Agent, AfterToolCallContext, AfterToolCallResult } from "@mariozechner/pi-agent-core";
import { HookbusError } from "../../foundation/errors.js";
import { hookbusStreamFn, type PiStreamMode } from "./stream.js";
import type { StreamCadence } from "../core/stream-windows.js";
import { gateBeforeToolCall, reportAfterToolCall } from "./tools.js";

export interface AttachHookbusOptions {
  /**
   * Send before_response_emit for an assistant message without tool calls (the final answer).
   * Default true. Turn it off when the final text is checked elsewhere.
   */
  responseEmit?: boolean;
  /**
   * What subscribers see of an answer (docs/adapters/pi.md "What a stream shows"): `"edge"`
   * text and thinking deltas as they come, through the edge's streaming redactor; `"hold"` one
   * finished, decided message; `"auto"` (default) `"edge"` while no before_response_emit policy
   * is registered, `"hold"` while one is.
   */
  stream?: PiStreamMode;
  /** How often a streamed answer's windows are asked (docs/streaming.md "Cadence"). */
  streamWindow?: StreamCadence;
}

const attached = new WeakSet<Agent>();

/**
 * Route `agent`'s LLM calls and tool calls through hookbus. Returns a function that detaches
 * hookbus again (restoring the agent's own `streamFn` and hooks). Attaching twice is refused
 * (HOOKBUS_INVALID_ARGUMENT): every call would be asked twice.
 */
export function attachHookbus(agent: Agent, options: AttachHookbusOptions = {}): () => void {
  if (attached.has(agent)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      "hookbus is attached to this pi Agent already (call the function attachHookbus returned to detach it first)",
      { argument: "agent" },
    );
  }
  const own = {
    streamFn: agent.streamFn,
    beforeToolCall: agent.beforeToolCall,
    afterToolCall: agent.afterToolCall,
  };
  agent.streamFn = hookbusStreamFn(
    own.streamFn,
    options.responseEmit !== false,
    options.stream,
    options.streamWindow,
  );
  agent.beforeToolCall = async (context, signal) => {
    const verdict = await gateBeforeToolCall(context);
    if (verdict?.block === true) return verdict;
    return own.beforeToolCall?.(context, signal);
  };
  agent.afterToolCall = async (context, signal) => {
    const theirs = await own.afterToolCall?.(context, signal);
    const ours = await reportAfterToolCall(withOverride(context, theirs));
    return ours === undefined ? theirs : { ...theirs, ...ours };
  };
  attached.add(agent);
  return () => {
    agent.streamFn = own.streamFn;
    agent.beforeToolCall = own.beforeToolCall;
    agent.afterToolCall = own.afterToolCall;
    attached.delete(agent);
  };
}

/** The result as the agent's own afterToolCall left it: what the model would see. */
function withOverride(
  context: AfterToolCallContext,
  override: AfterToolCallResult | undefined,
): AfterToolCallContext {
  if (override === undefined) return context;
  return {
    ...context,
    result: { ...context.result, content: override.content ?? context.result.content },
    isError: override.isError ?? context.isError,
  };
}
