/**
 * What the pi adapter's streaming tests share (pi-stream, pi-windows): a pi StreamFn that sends
 * scripted deltas as one text block, and the texts an agent's subscribers were shown.
 */
import type { AgentEvent, StreamFn } from "@mariozechner/pi-agent-core";
import {
  createAssistantMessageEventStream,
  type AssistantMessage,
  type AssistantMessageEvent,
} from "@mariozechner/pi-ai";

/** A streamFn sending `deltas` as one text block; before delta `pause.at` it waits. */
export function streaming(
  deltas: string[],
  pause?: { at: number; resume: Promise<void> },
): StreamFn {
  return (model) => {
    const stream = createAssistantMessageEventStream();
    const message = (text: string): AssistantMessage => ({
      role: "assistant",
      content: [{ type: "text", text }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: {
        input: 1,
        output: 1,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 2,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "stop",
      timestamp: Date.now(),
    });
    void (async () => {
      let text = "";
      const push = (event: AssistantMessageEvent) => stream.push(event);
      push({ type: "start", partial: message("") });
      push({ type: "text_start", contentIndex: 0, partial: message("") });
      for (const [i, delta] of deltas.entries()) {
        if (i === pause?.at) await pause.resume;
        text += delta;
        push({ type: "text_delta", contentIndex: 0, delta, partial: message(text) });
      }
      push({ type: "text_end", contentIndex: 0, content: text, partial: message(text) });
      push({ type: "done", reason: "stop", message: message(text) });
      stream.end();
    })();
    return stream;
  };
}

/** The text the last update (or end) of the assistant message showed. */
export function updates(events: AgentEvent[]): string[] {
  return events.flatMap((e) =>
    (e.type === "message_update" || e.type === "message_end") && e.message.role === "assistant"
      ? [e.message.content.map((b) => (b.type === "text" ? b.text : "")).join("")]
      : [],
  );
}
