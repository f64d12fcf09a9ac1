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
import { outputText, withOutputText } from "./items.js";

/** The same bound as the hold mode's (MAX_HELD_STREAM_EVENTS): text deltas are not held here. */
const MAX_HELD_EVENTS = 100_000;

type ResponseUsage = Extract<StreamEvent, { type: "response_done" }>["response"]["usage"];

/** Whether this run's streamed responses use the edge mode. */
export function useEdge(
  run: HookbusRun,
  options: { stream?: "auto" | "edge" | "hold"; responseEmit?: boolean },
): boolean {
  const mode = options.stream ?? "auto";
  if (mode !== "auto") return mode === "edge";
  return options.responseEmit === false || run.client.isFastPath("before_response_emit");
}

export async function* edgeStream(
  events: AsyncIterable<StreamEvent>,
  decide: (output: AgentOutputItem[], usage: ResponseUsage) => Promise<void>,
): AsyncIterable<StreamEvent> {
  const redactor = edgeRedactor();
  const held: StreamEvent[] = [];
  let shown = "";
  for await (const event of events) {
    if (event.type === "response_started") yield event;
    else if (event.type === "output_text_delta") {
      const delta = redactor.push(event.delta);
      shown += delta;
      // Built anew: the model's event may carry its text in other fields (providerData).
      if (delta !== "") yield { type: "output_text_delta", delta };
    } else if (event.type === "model") continue;
    else if (event.type !== "response_done") {
      if (held.length >= MAX_HELD_EVENTS) {
        throw limitExceeded("heldStreamEvents", "a model response held too many events", {
          max: MAX_HELD_EVENTS,
        });
      }
      held.push(event);
    } else {
      const rest = redactor.end();
      shown += rest;
      if (rest !== "") yield { type: "output_text_delta", delta: rest };
      const output = event.response.output as AgentOutputItem[];
      await decide(output, event.response.usage);
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
