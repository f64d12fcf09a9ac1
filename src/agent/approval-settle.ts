/** Between a pending_approval reply and what the caller gets: the settled decision. */
import type { Decision, ModifyingHookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { CallOptions, CallResult, HookbusClientParts } from "./types.js";

/**
 * The settled decision of a pending call, waited for; the pending decision itself when the caller
 * asked for it (`waitForApproval: false`: a framework's own approval flow answers it).
 */
export async function settleApproval<H extends ModifyingHookName>(
  parts: Pick<HookbusClientParts, "approvals" | "onApproval">,
  context: Record<string, unknown>,
  result: CallResult<H>,
  opts: CallOptions,
  signal: AbortSignal,
): Promise<CallResult<H>> {
  if (result.decision.outcome !== "pending_approval" || opts.waitForApproval === false)
    return result;
  const callId = result.callId;
  const pending = result.decision as Decision<"before_tool_call">;
  const id = pending.approval?.id;
  const request = pending.requireApproval;
  if (id === undefined || request === undefined)
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      "a pending_approval decision without its request",
    );
  if (parts.approvals === undefined || callId === undefined)
    throw new HookbusError(
      "HOOKBUS_APPROVAL_UNRESOLVED",
      "a pending approval, and this client has no way to wait for it (connect with HookbusClient.connect, or pass `approvals`)",
    );
  const settled = await parts.approvals.wait(
    String(context.agentId),
    { id, callId, timeoutMs: request.timeoutMs },
    opts.onApproval ?? parts.onApproval,
    signal,
  );
  return { ...result, decision: settled as CallResult<H>["decision"] };
}
