/**
 * The data subject an agent may name in a call's context (`subject`, a user id), and its limits:
 * 1 to 128 characters of letters, digits and `._:@+-`. Anything else is refused with
 * HOOKBUS_PRIVACY_SUBJECT_INVALID rather than folded into a key name that could collide.
 */
import { HookbusError } from "../foundation/errors.js";

export const MAX_SUBJECT_CHARS = 128;
const SUBJECT_CHARS = /^[A-Za-z0-9._:@+-]+$/;

/** Throws HOOKBUS_PRIVACY_SUBJECT_INVALID unless `id` is a valid subject id. */
export function checkSubjectId(id: unknown, what = "subject"): string {
  if (
    typeof id !== "string" ||
    id.length === 0 ||
    id.length > MAX_SUBJECT_CHARS ||
    !SUBJECT_CHARS.test(id)
  ) {
    throw new HookbusError(
      "HOOKBUS_PRIVACY_SUBJECT_INVALID",
      `${what} must be 1 to ${MAX_SUBJECT_CHARS} characters of letters, digits and ._:@+-`,
      { length: typeof id === "string" ? id.length : null },
    );
  }
  return id;
}
