/**
 * Windows of a streamed answer (issue 34): a before_response_emit event with `stream.window` is
 * asked only of the policies that opted in (`stream: true`); every other policy keeps whole-answer
 * semantics and is asked at the answer's end. The agent streams windows only while every such
 * policy opted in, so a policy left out here still decides the whole answer before it shows.
 */
import type { RegistryPolicy } from "../registry/document.js";
import { streamsWindows } from "../registry/stream-entry.js";

/** The policies a call asks: all of its hook's, or the streaming ones for a window event. */
export function askedAbout(
  policies: readonly RegistryPolicy[],
  event: Readonly<Record<string, unknown>>,
): readonly RegistryPolicy[] {
  return isWindowEvent(event) ? policies.filter(streamsWindows) : policies;
}

export function isWindowEvent(event: Readonly<Record<string, unknown>>): boolean {
  const stream = event.stream;
  return typeof stream === "object" && stream !== null && "window" in stream;
}
