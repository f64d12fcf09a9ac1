/**
 * The emergency stop at the coordinator (docs/operations.md, "Emergency stop"): a call of a
 * stopped agent or tool is blocked before any worker is asked, by the pseudo-policy
 * `hookbus:emergency-stop`, and recorded like any block. A stale list (no good read for
 * STOPS_STALE_AFTER_MS, or none since a reconnect) is read again while the call waits, within its
 * deadline; only when no read succeeds in time, or the stored value is malformed, is the call
 * blocked: what would have been stopped is unknown, so nothing may pass (fail closed).
 *
 * The same list is checked wherever a call can still proceed after its decision: an approval
 * that settles to allow (approved, or timed out with `timeoutBehavior: "allow"`) is blocked when
 * its agent or tool is stopped by then (approval-service.ts).
 */
import { modifyingHooks, type ModifyingHookName } from "../catalog/catalog.js";
import type { PolicyOutcomeInput } from "../merge/outcome.js";
import {
  EMERGENCY_STOP_POLICY,
  stopReason,
  type Stop,
  type StopListSource,
  type StopListState,
} from "../registry/stops.js";
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

/**
 * The state to decide a call by: the follower's own while it is fresh (no await on the hot
 * path); else a fresh read, waited for until `deadline`.
 */
export function stopStateFor(
  source: StopListSource | undefined,
  deadline: number,
): StopListState | undefined | Promise<StopListState> {
  if (source === undefined) return undefined;
  const state = source.state();
  if (state.readable || !state.waitable) return state;
  return source.fresh(deadline);
}

/** The stop in force for an agent's tool (an approval's call), by the registry's vocabulary. */
export function stopOfTool(
  state: StopListState & { readable: true },
  call: { agentId: string; toolName: string; snapshot: RegistrySnapshot },
): Stop | undefined {
  return state.list.stopFor({
    agentId: call.agentId,
    toolName: call.toolName,
    vocabulary: call.snapshot.vocabulary,
  });
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
