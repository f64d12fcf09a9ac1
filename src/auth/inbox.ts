/**
 * Reply inboxes per role. A connection's replies arrive under its `inboxPrefix`; when each role
 * uses `_INBOX_<ns>.<role>.<id>`, NATS permissions can let each user subscribe only to its own
 * prefix, so no one can read another's answers (an agent B's decisions, a policy's verdicts).
 */
import type { AuthRole } from "./description.js";
import { encodeToken } from "../bus/tokens.js";
import { HookbusError } from "../errors.js";

/** `_INBOX_<ns>.<role>.<id>`: the id is encoded like any subject token (agents: their token). */
export function inboxPrefixFor(namespace: string, role: AuthRole, id: string): string {
  return `_INBOX_${namespace}.${role}.${encodeToken(id)}`;
}

const TOKEN = /^[^\s.*>]+$/;

/** An inbox prefix is one or more literal subject tokens: no wildcard, no whitespace. */
export function checkInboxPrefix(prefix: string): string {
  if (prefix.length <= 200 && prefix.split(".").every((token) => TOKEN.test(token))) return prefix;
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `inbox prefix ${JSON.stringify(prefix)} must be 1-200 characters of literal subject tokens (no '*', '>', spaces or empty tokens)`,
    { argument: "inbox-prefix" },
  );
}

/**
 * The inbox prefix a connection was opened with. nats.js v3 keeps it on the connection object
 * but not in the `NatsConnection` interface (its own JetStream code reads it the same way).
 */
export function connectionInboxPrefix(nc: object): string | undefined {
  const prefix = (nc as { options?: { inboxPrefix?: unknown } }).options?.inboxPrefix;
  return typeof prefix === "string" && prefix !== "" ? prefix : undefined;
}
