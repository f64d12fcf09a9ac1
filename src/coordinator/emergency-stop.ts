/**
 * The emergency stop at the coordinator (docs/operations.md, "Emergency stop"): a call of a
 * stopped agent or tool is blocked before any worker is asked, by the pseudo-policy
 * `hookbus:emergency-stop`, and recorded like any block. While the stop list cannot be read (no
 * good read for STOPS_STALE_AFTER_MS, or a malformed value) every call is blocked: what would
 * have been stopped is unknown, so nothing may pass (fail closed).
 */
import { modifyingHooks, type ModifyingHookName } from "../catalog/catalog.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import { EMERGENCY_STOP_POLICY, stopReason, type StopListState } from "../registry/stops.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";

export interface StoppableCall {
  hook: ModifyingHookName;
  agentId: string;
  context: Readonly<Record<string, unknown>>;
  event: Readonly<Record<string, unknown>>;
  /** The registry revision in force: its vocabulary says what class a tool is. */
  snapshot: RegistrySnapshot;
}

/** The tool as policies see it: the event's name (tool hooks), else the context's. */
function toolNameOf(call: StoppableCall): string | undefined {
  const name = call.event.toolName ?? call.context.toolName;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** Why this call must be blocked by the emergency stop; undefined when it may be decided. */
export function emergencyStopReason(
  state: StopListState | undefined,
  call: StoppableCall,
): string | undefined {
  if (state === undefined) return undefined;
  if (!state.readable)
    return `emergency stop list unreadable (HOOKBUS_STOP_LIST_UNREADABLE: ${state.why}): every call is blocked until it can be read (fail closed)`;
  const stop = state.list.stopFor({
    agentId: call.agentId,
    toolName: toolNameOf(call),
    vocabulary: call.snapshot.vocabulary,
  });
  return stop === undefined ? undefined : stopReason(stop);
}

/**
 * The one outcome that decides a stopped call. A hook whose verdict can block gets a block
 * verdict; one that cannot (before_agent_reply) gets a failure that fails closed, which blocks too.
 */
export function emergencyStopOutcome(hook: ModifyingHookName, reason: string): PolicyOutcomeInput {
  // `mode` spelled out: the call handler merges its own outcomes unparsed (no defaults applied).
  const base = {
    policy: EMERGENCY_STOP_POLICY,
    priority: Number.MAX_SAFE_INTEGER,
    mode: "enforce" as const,
    latencyMs: 0,
  };
  const shape = (modifyingHooks[hook].verdict as { shape?: Record<string, unknown> }).shape;
  if (shape !== undefined && "block" in shape)
    return { ...base, status: "ok", verdict: { block: true, blockReason: reason } };
  return {
    ...base,
    failMode: "fail-closed",
    status: "error",
    error: { code: "HOOKBUS_BLOCKED", message: reason },
  };
}
