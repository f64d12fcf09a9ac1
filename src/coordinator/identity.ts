/**
 * Identity is the subject: the agent token of `<ns>.call.<agent>.<hook>` and
 * `<ns>.observe.<agent>.<hook>` names the agent, and NATS permissions bind each NATS user to its
 * token (docs/security.md). A body that claims another agent is refused, whatever it says.
 */
import { decodeToken, encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../foundation/errors.js";
import { checkIdLimit, type Limits } from "../foundation/limits.js";

export interface AgentAddress {
  /** The agent token exactly as it appeared in the subject. */
  agentToken: string;
  /**
   * The agent id the token names, when it is a canonical token of an id within the limits;
   * undefined otherwise (such a call is refused, and recorded under `(invalid)`).
   */
  agentId: string | undefined;
  /** The hook token of the subject (not yet checked against the catalog). */
  hookToken: string;
}

/** Where records of calls whose subject names no usable agent are filed. */
export const INVALID_AGENT = "(invalid)";

/** `<ns>.<kind>.<agent>.<hook>`: the namespace is one token, so the parts are fixed. */
export function addressOf(subject: string, limits: Pick<Limits, "maxTokenIdBytes">): AgentAddress {
  const parts = subject.split(".");
  const agentToken = parts[2] ?? "";
  const hookToken = parts[3] ?? "";
  return { agentToken, agentId: agentIdOf(agentToken, limits.maxTokenIdBytes), hookToken };
}

function agentIdOf(token: string, maxBytes: number): string | undefined {
  // Each byte of an id takes at most three token characters: a longer token is over the limit
  // before it is decoded at all.
  if (token === "" || token.length > maxBytes * 3) return undefined;
  try {
    const id = decodeToken(token);
    checkIdLimit("agentId", id, maxBytes);
    // Only the canonical spelling counts: `=61gent` is not the subject `agent` is allowed on.
    return encodeToken(id) === token ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The body's `context.agentId` must be the subject's agent, and its hook the subject's hook. */
export function assertIdentity(
  address: AgentAddress,
  body: { hook: string; context: Record<string, unknown> },
): void {
  const claimed = body.context.agentId;
  if (address.agentId === undefined) {
    throw new HookbusError(
      "HOOKBUS_IDENTITY_MISMATCH",
      `the subject's agent token is not a valid agent id`,
      { agentToken: address.agentToken.slice(0, 64) },
    );
  }
  if (claimed !== address.agentId) {
    throw new HookbusError(
      "HOOKBUS_IDENTITY_MISMATCH",
      `context.agentId ${JSON.stringify(claimed)} is not the agent of the subject (${JSON.stringify(address.agentId)})`,
      {
        agentId: address.agentId,
        claimed: typeof claimed === "string" ? claimed : String(claimed),
      },
    );
  }
  if (body.hook !== address.hookToken) {
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      `the body's hook ${body.hook} is not the subject's hook ${address.hookToken}`,
      { hook: body.hook },
    );
  }
}
