/**
 * Idempotency, scoped and checked. A record's de-duplication id is scoped to the agent and the
 * session (`decision.<agentToken>.<sessionToken>.<callId>`), so two agents or two sessions that
 * happen to use the same callId never meet. Within the scope, a duplicate is a retry only when
 * it is the same call: the digest of (hook, context, event) stored with the record must match.
 * Otherwise the id was reused for a different call (HOOKBUS_CALL_ID_CONFLICT), and the other
 * call's decision is never given out.
 */
import { createHash } from "node:crypto";
import { encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../foundation/errors.js";
import { canonicalize } from "../foundation/canonical-json.js";

export type ScopedKind = "decision" | "error" | "observe" | "late";

/** sha256 (hex) of the canonical JSON of `{ hook, context, event }`. */
export function callDigest(hook: string, context: unknown, event: unknown): string {
  return createHash("sha256").update(canonicalize({ hook, context, event })).digest("hex");
}

/** `<kind>.<agentToken>.<sessionToken>.<id>` (errors add the digest: see errorMessageId). */
export function scopedMessageId(
  kind: ScopedKind,
  agentId: string,
  sessionKey: string,
  id: string,
): string {
  return `${kind}.${encodeToken(agentId)}.${encodeToken(sessionKey)}.${id}`;
}

/**
 * An error record's id also carries the call's digest: a retried failing call is stored once,
 * and two different calls that fail under one id are both recorded.
 */
export function errorMessageId(
  agentId: string,
  sessionKey: string,
  id: string,
  digest: string,
): string {
  return `${scopedMessageId("error", agentId, sessionKey, id)}.${digest.slice(0, 32)}`;
}

/** What a duplicate append found: the same call again, or another call under the same id. */
export function isSameCall(stored: { callDigest?: string | undefined }, digest: string): boolean {
  return stored.callDigest === digest;
}

export function callIdConflict(kind: "callId" | "eventId", id: string, seq: number): HookbusError {
  return new HookbusError(
    "HOOKBUS_CALL_ID_CONFLICT",
    `${kind} ${JSON.stringify(id)} was already used in this session for a different call (record ${seq}); a retry must resend the same hook, context and event`,
    { [kind]: id, seq },
  );
}
