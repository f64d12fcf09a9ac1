/**
 * The windows mode of pi's `streamFn` (issue 34, item 2): while every before_response_emit
 * policy opted in (`stream: true`), text deltas are asked of them window by window
 * (../core/stream-windows.ts) and what they allow reaches pi through the edge (./stream-edge.ts).
 * A window's block cuts the answer: the last partial carries the block's reason, nothing after
 * it is forwarded, and the call ends as pi's error message with the HOOKBUS_BLOCKED code.
 */
import type { AssistantMessageEvent } from "@mariozechner/pi-ai";
import { StreamWindows, type StreamCadence } from "../core/stream-windows.js";
import type { HookbusRun } from "../core/run.js";
import type { PiEdge } from "./stream-edge.js";

/** The windows of this call, when `"auto"` finds every response policy streaming. */
export function piWindows(
  run: HookbusRun | undefined,
  auto: boolean,
  responseEmit: boolean,
  cadence: Required<StreamCadence>,
): StreamWindows | undefined {
  if (run === undefined || !auto || !responseEmit) return undefined;
  return run.client.responseStreaming() === "windows" ? new StreamWindows(run, cadence) : undefined;
}

/**
 * The edge's events for the model's `event`, text passing its windows first. Throws the block
 * after the cut (once the whole answer was recorded with what was shown).
 */
export async function windowedEvents(
  windows: StreamWindows,
  edge: PiEdge,
  event: AssistantMessageEvent,
  forward: (event: AssistantMessageEvent) => void,
): Promise<void> {
  if (event.type !== "text_delta" && event.type !== "text_end") {
    for (const out of edge.rewrite(event)) forward(out);
    return;
  }
  const released =
    event.type === "text_delta" ? await windows.push(event.delta) : await windows.end();
  if (released.text !== "") {
    const delta = { type: "text_delta", contentIndex: event.contentIndex, delta: released.text };
    for (const out of edge.rewrite(delta as AssistantMessageEvent)) forward(out);
  }
  if (released.cut !== undefined) {
    for (const out of edge.flush()) forward(out);
    await windows.decideWhole(edge.shownText);
    throw released.cut;
  }
  if (event.type === "text_end") for (const out of edge.rewrite(event)) forward(out);
}
