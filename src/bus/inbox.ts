/**
 * Reply inboxes: the prefix a connection was opened with, and checking one. Each role gets its own
 * prefix (auth/inbox.ts), so NATS permissions can let each user read only its own replies.
 */
import { HookbusError } from "../foundation/errors.js";

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
