/**
 * The registry's `stream` flag (issue 34): a before_response_emit policy that opts in is asked
 * about windows of a streamed answer as it streams, besides the whole answer at its end. Only
 * that hook streams, so the flag on an entry without it is a mistake, reported as one.
 */
import type { ValidationIssue } from "../foundation/errors.js";

/** The hook whose policies may opt in to windows of a streamed answer. */
export const STREAMED_HOOK = "before_response_emit";

/** `stream: true` on an entry that is not asked about before_response_emit. */
export function streamEntryIssues(raw: unknown, index: number): ValidationIssue[] {
  if (typeof raw !== "object" || raw === null) return [];
  const entry = raw as { stream?: unknown; hooks?: unknown };
  if (entry.stream !== true) return [];
  const hooks: unknown[] = Array.isArray(entry.hooks) ? entry.hooks : [];
  if (hooks.includes(STREAMED_HOOK)) return [];
  return [
    {
      path: `policies.${index}.stream`,
      rule: "stream_without_response_hook",
      message: `stream: true needs the hook ${STREAMED_HOOK}: only a final answer streams`,
    },
  ];
}

/**
 * How a streamed final answer shows: `edge` (as it comes, redacted at the edge), `windows` (as
 * the opted-in policies allow each window), `hold` (only once the whole answer was decided).
 */
export type ResponseStreaming = "edge" | "windows" | "hold";

/** Whether a policy is asked about a streamed answer's windows. */
export function streamsWindows(policy: { readonly stream?: boolean | undefined }): boolean {
  return policy.stream === true;
}
