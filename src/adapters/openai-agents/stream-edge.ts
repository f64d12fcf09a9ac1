/**
 * The edge mode of a streamed model response: text deltas are shown as they come, through the
 * edge's streaming redactor (src/redact-stream/). Raw `model` events carry the provider's own
 * unredacted text, so they are dropped. Everything else is held until the response is complete
 * and decided, as in the hold mode: function calls reach the SDK only after after_llm_call. The
 * whole-text decisions are asked and recorded as in the hold mode; a block fails the stream
 * (what was shown stays shown), and the completed response carries the text the user saw.
 */
import type { AgentOutputItem, StreamEvent } from "@openai/agents";
import { limitExceeded } from "../../foundation/limits.js";
import { edgeRedactor } from "../../redact-stream/index.js";
import type { HookbusRun } from "../core/run.js";
import { checkCadence, StreamWindows, type StreamCadence } from "../core/stream-windows.js";
import { outputText, withOutputText } from "./items.js";

/** The same bound as the hold mode's (MAX_HELD_STREAM_EVENTS): text deltas are not held here. */
const MAX_HELD_EVENTS = 100_000;

export type ResponseUsage = Extract<StreamEvent, { type: "response_done" }>["response"]["usage"];

interface StreamOptions {
  stream?: "auto" | "edge" | "hold";
  responseEmit?: boolean;
  streamWindow?: StreamCadence;
}

/** Whether this run's streamed responses use the edge mode (the windows mode streams through it). */
export function useEdge(run: HookbusRun, options: StreamOptions): boolean {
  const mode = options.stream ?? "auto";
  if (mode !== "auto") return mode === "edge";
  return options.responseEmit === false || run.client.responseStreaming() !== "hold";
}

/** The windows of this response, while every before_response_emit policy opted in (`"auto"`). */
export function useWindows(run: HookbusRun, options: StreamOptions): StreamWindows | undefined {
  if ((options.stream ?? "auto") !== "auto" || options.responseEmit === false) return undefined;
  if (run.client.responseStreaming() !== "windows") return undefined;
  return new StreamWindows(run, checkCadence(options.streamWindow));
}

export async function* edgeStream(
  events: AsyncIterable<StreamEvent>,
  decide: (output: AgentOutputItem[], usage: ResponseUsage, shown: string) => Promise<void>,
  windows?: StreamWindows,
): AsyncIterable<StreamEvent> {
  const redactor = edgeRedactor();
  const held: StreamEvent[] = [];
  let shown = "";
  // What a window's decision released goes through the edge; a cut ends the stream after it.
  const show = (text: string, end: boolean): StreamEvent | undefined => {
    const delta = redactor.push(text) + (end ? redactor.end() : "");
    shown += delta;
    // Built anew: the model's event may carry its text in other fields (providerData).
    return delta === "" ? undefined : { type: "output_text_delta", delta };
  };
  for await (const event of events) {
    if (event.type === "response_started") yield event;
    else if (event.type === "output_text_delta") {
      const released =
        windows === undefined ? { text: event.delta } : await windows.push(event.delta);
      const out = show(released.text, released.cut !== undefined);
      if (out !== undefined) yield out;
      if (released.cut !== undefined) {
        await windows!.decideWhole(shown);
        throw released.cut;
      }
    } else if (event.type === "model") continue;
    else if (event.type !== "response_done") {
      if (held.length >= MAX_HELD_EVENTS) {
        throw limitExceeded("heldStreamEvents", "a model response held too many events", {
          max: MAX_HELD_EVENTS,
        });
      }
      held.push(event);
    } else {
      const last = (await windows?.end()) ?? { text: "" };
      const out = show(last.text, true);
      if (out !== undefined) yield out;
      if (last.cut !== undefined) {
        await windows!.decideWhole(shown);
        throw last.cut;
      }
      const output = event.response.output as AgentOutputItem[];
      await decide(output, event.response.usage, shown);
      yield* held;
      held.length = 0;
      yield outputText(output) === shown
        ? event
        : {
            ...event,
            response: {
              ...event.response,
              output: withOutputText(output, shown) as typeof event.response.output,
            },
          };
    }
  }
}
