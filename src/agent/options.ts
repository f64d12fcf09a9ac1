/**
 * Checks of the SDK's own arguments (ids and timeouts). Ids travel in NATS headers
 * (`Hookbus-Call-Id`, JetStream's `Nats-Msg-Id`), where a newline would corrupt the message and
 * non-ASCII bytes are not portable, hence printable ASCII only.
 */
import { HookbusError } from "../foundation/errors.js";

export const DEFAULT_AGENT_TIMEOUT_MS = 5000;
/** Longer than any sane per-call deadline; catches seconds passed as milliseconds' inverse. */
export const MAX_TIMEOUT_MS = 10 * 60_000;

const ID = /^[\x20-\x7e]{1,256}$/;

export function checkId(value: unknown, name: "callId" | "eventId"): string {
  if (typeof value === "string" && ID.test(value)) return value;
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${name} must be 1-256 printable ASCII characters, got ${JSON.stringify(value)}`,
    { argument: name },
  );
}

export function checkTimeout(value: unknown, name = "timeoutMs"): number {
  if (typeof value === "number" && Number.isFinite(value) && value > 0 && value <= MAX_TIMEOUT_MS)
    return value;
  throw new HookbusError(
    "HOOKBUS_INVALID_ARGUMENT",
    `${name} must be a number of milliseconds in (0, ${MAX_TIMEOUT_MS}], got ${String(value)}`,
    { argument: name },
  );
}
