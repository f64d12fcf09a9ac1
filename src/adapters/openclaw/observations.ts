/** OpenClaw's observational hook events as hookbus events (pure; fields hookbus does not know are kept). */
import type {
  OpenClawAgentEndEvent,
  OpenClawLlmInputEvent,
  OpenClawLlmOutputEvent,
} from "./host.js";

/** Messages hookbus's schema accepts: objects with a role (chat) or a type (Responses-API item). */
function messages(list: unknown[]): Record<string, unknown>[] {
  return list.filter(
    (m): m is Record<string, unknown> =>
      typeof m === "object" &&
      m !== null &&
      (typeof (m as { role?: unknown }).role === "string" ||
        typeof (m as { type?: unknown }).type === "string"),
  );
}

export function llmInputEvent(event: OpenClawLlmInputEvent): Record<string, unknown> {
  return {
    provider: event.provider,
    model: event.model,
    ...(event.systemPrompt === undefined ? {} : { systemPrompt: event.systemPrompt }),
    prompt: event.prompt,
    messages: messages(event.historyMessages),
    imagesCount: event.imagesCount,
    sessionId: event.sessionId,
  };
}

export function llmOutputEvent(event: OpenClawLlmOutputEvent): Record<string, unknown> {
  return {
    provider: event.provider,
    model: event.model,
    assistantTexts: event.assistantTexts,
    ...(event.usage === undefined ? {} : { usage: event.usage }),
    sessionId: event.sessionId,
  };
}

export function agentEndEvent(event: OpenClawAgentEndEvent): Record<string, unknown> {
  return {
    messages: messages(event.messages),
    success: event.success,
    ...(event.error === undefined ? {} : { error: event.error }),
    ...(event.durationMs === undefined ? {} : { durationMs: event.durationMs }),
  };
}
