/**
 * Reply inboxes per role. A connection's replies arrive under its `inboxPrefix`; when each role
 * uses `_INBOX_<ns>.<role>.<id>`, NATS permissions can let each user subscribe only to its own
 * prefix, so no one can read another's answers (an agent B's decisions, a policy's verdicts).
 */
import { encodeToken } from "../bus/tokens.js";
import type { AuthRole } from "./description.js";

/** `_INBOX_<ns>.<role>.<id>`: the id is encoded like any subject token (agents: their token). */
export function inboxPrefixFor(namespace: string, role: AuthRole, id: string): string {
  return `_INBOX_${namespace}.${role}.${encodeToken(id)}`;
}
