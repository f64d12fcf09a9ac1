/** OpenClaw's observational hook events as hookbus events (pure): the fields hookbus records. */
import type {
  OpenClawAgentEndEvent,
  OpenClawHookContext,
  OpenClawLlmInputEvent,
  OpenClawLlmOutputEvent,
  OpenClawSessionEndEvent,
  OpenClawSessionStartEvent,
} from "./host.js";
import { runContext } from "./mapping.js";

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

/** A session hook's context: the event's session key, else the context's, else the session id. */
export function sessionContext(
  agentId: string,
  event: OpenClawSessionStartEvent | OpenClawSessionEndEvent,
  ctx: OpenClawHookContext | undefined,
) {
  return runContext(agentId, {
    ...ctx,
    sessionKey: event.sessionKey ?? ctx?.sessionKey ?? event.sessionId,
  });
}

export function sessionStartEvent(event: OpenClawSessionStartEvent): Record<string, unknown> {
  return {
    sessionId: event.sessionId,
    ...(event.resumedFrom === undefined ? {} : { resumedFrom: event.resumedFrom }),
  };
}

export function sessionEndEvent(event: OpenClawSessionEndEvent): Record<string, unknown> {
  return {
    sessionId: event.sessionId,
    messageCount: event.messageCount,
    ...(event.durationMs === undefined ? {} : { durationMs: event.durationMs }),
    ...(event.reason === undefined ? {} : { reason: event.reason }),
  };
}
