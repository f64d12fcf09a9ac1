/**
 * Sending what a hostile agent would send: raw requests on the agent-facing subjects, bypassing
 * the SDK's own checks, with the coordinator's answer decoded.
 */
import {
  headers as natsHeaders,
  type Msg,
  type NatsConnection,
  type Subscription,
} from "@nats-io/transport-node";
import { definePolicy } from "../../../src/index.js";
import type { Pipeline, PipelineOptions } from "../pipeline/harness.js";

/** The tool gate of these tests: blocks `exec`, has no opinion on anything else. */
export const execGuard = definePolicy({
  name: "guard",
  hooks: {
    before_tool_call: (e) =>
      e.toolName === "exec" ? { block: true, blockReason: "no exec" } : undefined,
  },
});

/** A pipeline's registry and workers with `execGuard` alone. */
export const withExecGuard = {
  registry: { policies: [{ name: "guard", hooks: ["before_tool_call"], priority: 10 }] },
  policies: [execGuard],
} satisfies PipelineOptions;

/** A hostile worker of `policy`: answers each request with what `reply` gives, as is. */
export function rawWorker(
  p: Pipeline,
  policy: string,
  reply: (msg: Msg) => Promise<void> | void,
): Subscription {
  return p.connections.workers.subscribe(p.subjects.policyWildcard(policy), {
    queue: p.subjects.policyQueue(policy),
    callback: (_e, msg) => void reply(msg),
  });
}

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

/**
 * An `exec` tool call (id `rogue-1`) decided while `reply` answers for the policy "rogue": the
 * decision's outcome, and the record the coordinator stored for it.
 */
export async function rogueExecCall(
  p: Pipeline,
  reply: (msg: Msg) => Promise<void> | void,
): Promise<{ outcome: string; stored: Awaited<ReturnType<Pipeline["decisionRecord"]>> }> {
  const sub = rawWorker(p, "rogue", reply);
  try {
    const result = await p.client.call(
      "before_tool_call",
      { agentId: "a", sessionKey: "s", runId: "r" },
      { toolName: "exec", params: {} },
      { callId: "rogue-1" },
    );
    return { outcome: result.decision.outcome, stored: await p.decisionRecord("rogue-1") };
  } finally {
    sub.unsubscribe();
  }
}
