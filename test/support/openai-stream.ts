/**
 * A scripted streamed response for the openai-agents adapter's stream tests (-stream, -windows):
 * the model events of an answer sent as `deltas`, one after a turn of the event loop each (as a
 * model's deltas arrive over time). `pause` holds delta `pause.at` until `pause.resume`; `read`
 * counts the deltas the adapter has taken.
 */
import type { StreamEvent } from "@openai/agents";
import { assistantMessage } from "@openai/agents/testing";

export async function* streamedResponse(
  deltas: readonly string[],
  options: { pause?: { at: number; resume: Promise<void> }; read?: { n: number } } = {},
): AsyncIterable<StreamEvent> {
  const { pause, read } = options;
  yield { type: "response_started" };
  for (const [i, delta] of deltas.entries()) {
    if (i === pause?.at) await pause.resume;
    await Promise.resolve();
    if (read !== undefined) read.n++;
    yield { type: "output_text_delta", delta };
  }
  const outputTokens = deltas.length;
  yield {
    type: "response_done",
    response: {
      id: "resp-1",
      usage: { requests: 1, inputTokens: 10, outputTokens, totalTokens: 10 + outputTokens },
      output: [assistantMessage(deltas.join(""))],
    },
  };
}
