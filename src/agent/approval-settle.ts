/** Between a pending_approval reply and what the caller gets: the settled decision. */
import type { ModifyingHookName } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import type { CallOptions, CallResult, HookbusClientParts } from "./types.js";

export async function settleApproval<H extends ModifyingHookName>(
  parts: Pick<HookbusClientParts, "approvals" | "onApproval">,
  context: Record<string, unknown>,
  result: CallResult<H>,
  opts: CallOptions,
): Promise<CallResult<H>> {
  if (result.decision.outcome !== "pending_approval") return result;
  const callId = result.callId;
  if (parts.approvals === undefined || callId === undefined)
    throw new HookbusError(
      "HOOKBUS_APPROVAL_UNRESOLVED",
      "a pending approval, and this client has no way to wait for it (connect with HookbusClient.connect, or pass `approvals`)",
    );
  const settled = await parts.approvals.wait(
    String(context.agentId),
    callId,
    result.decision,
    opts.onApproval ?? parts.onApproval,
  );
  return { ...result, decision: settled as CallResult<H>["decision"] };
}
