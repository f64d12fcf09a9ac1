/** A valid event of every modifying hook, and the conformance policy's requests (docs/conformance.md). */
import { randomUUID } from "node:crypto";
import type { ModifyingHookName } from "../catalog/catalog.js";

export const AGENT = "conformance-agent";

export function context(sessionKey = `s-${randomUUID()}`): { agentId: string; sessionKey: string } {
  return { agentId: AGENT, sessionKey };
}

export const SAMPLE_EVENTS: Record<ModifyingHookName, Record<string, unknown>> = {
  before_agent_reply: { cleanedBody: "hello" },
  before_llm_call: {
    messages: [{ role: "user", content: "hello" }],
    systemPrompt: "be brief",
    tools: [{ name: "read_file", description: "reads a file" }],
    model: "m",
    iteration: 0,
  },
  after_llm_call: {
    toolCalls: [{ id: "c1", name: "read_file", arguments: { path: "/tmp/x" } }],
    model: "m",
    iteration: 0,
  },
  before_tool_call: { toolName: "read_file", toolCallId: "c1", params: { path: "/tmp/x" } },
  before_tool_result: {
    toolName: "read_file",
    toolCallId: "c1",
    params: { path: "/tmp/x" },
    result: "contents",
    isError: false,
    durationMs: 3,
  },
  before_response_emit: { content: "done", allContent: ["done"] },
};

/** A PolicyRequest body, as the coordinator sends it. */
export function request(
  hook: string,
  event: unknown,
  ctx: unknown = context(),
): Record<string, unknown> {
  return { callId: `conf-${randomUUID()}`, hook, context: ctx, event };
}

/** A before_tool_call request for one of the conformance policy's actions. */
export function action(tool: string, params: Record<string, unknown>, ctx?: unknown) {
  return request("before_tool_call", { toolName: tool, params }, ctx);
}
