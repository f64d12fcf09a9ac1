/**
 * Sending what a hostile agent would send: raw requests on the agent-facing subjects, bypassing
 * the SDK's own checks, with the coordinator's answer decoded.
 */
import { headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import type { Pipeline } from "../pipeline/harness.js";

export interface RawAnswer {
  code: string | undefined;
  body: Record<string, unknown>;
}

export async function rawRequest(
  nc: NatsConnection,
  p: Pipeline,
  subject: string,
  data: Uint8Array | string,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<RawAnswer> {
  const h = natsHeaders();
  for (const [key, value] of Object.entries(headers)) h.set(key, value);
  const reply = await nc.request(
    subject,
    typeof data === "string" ? new TextEncoder().encode(data) : data,
    // No header block at all when there is none to send (an agent of protocol 2's plain call).
    Object.keys(headers).length === 0 ? { timeout: timeoutMs } : { timeout: timeoutMs, headers: h },
  );
  const code = reply.headers?.get("Hookbus-Error-Code") || undefined;
  const body = (await p.bus.codec.decodeMessage(reply)) as Record<string, unknown>;
  return { code, body };
}

/** A well-formed before_tool_call request body. */
export function toolCall(
  callId: string,
  context: Record<string, unknown>,
  toolName = "read_file",
): {
  callId: string;
  hook: "before_tool_call";
  context: Record<string, unknown>;
  event: Record<string, unknown>;
} {
  return {
    callId,
    hook: "before_tool_call",
    context: { runId: "run-1", ...context },
    event: { toolName, toolCallId: "tc-1", params: { path: "/etc/hosts" } },
  };
}

export function json(value: unknown): string {
  return JSON.stringify(value);
}
