/**
 * What the tests that write a scenario's whole log through the pipeline share (the audit fixture,
 * the UI test): a policy that blocks the shell, one that answers too late, and a call the
 * coordinator rejects.
 */
import { headers, type NatsConnection } from "@nats-io/transport-node";
import type { Subjects } from "../../src/bus/subjects.js";
import { definePolicy, type Bus, type Policy } from "../../src/index.js";
import { sleep } from "./wait.js";

/** How long sloth thinks: longer than the timeout its registry entry gives it. */
export const SLOTH_SLEEP_MS = 700;

/** Blocks every `exec` ("shell access is not allowed"); no opinion on other tools. */
export function noShellPolicy(version?: string): Policy {
  return definePolicy({
    name: "no-shell",
    ...(version === undefined ? {} : { version }),
    hooks: {
      before_tool_call: (event) =>
        event.toolName === "exec"
          ? { block: true, blockReason: "shell access is not allowed" }
          : undefined,
    },
  });
}

/** On the model "slow", blocks after SLOTH_SLEEP_MS: a late verdict. No opinion otherwise. */
export const sloth = definePolicy({
  name: "sloth",
  hooks: {
    async before_llm_call(event) {
      if (event.model !== "slow") return undefined;
      await sleep(SLOTH_SLEEP_MS);
      return { block: true, blockReason: "too slow to say" };
    },
  },
});

/**
 * Sends a before_tool_call whose event fails the schema, raw as a broken agent would; resolves
 * to the reply's `Hookbus-Error-Code`.
 */
export async function sendInvalidToolCall(
  p: { bus: Bus; subjects: Subjects; connections: { agent: NatsConnection } },
  callId: string,
  context: { agentId: string; sessionKey: string; runId: string },
): Promise<string | undefined> {
  const bad = await p.bus.codec.encode({
    callId,
    hook: "before_tool_call",
    context,
    event: { toolName: "", params: {} },
  });
  const h = headers();
  h.set("Hookbus-Call-Id", callId);
  h.set("Hookbus-Timeout-Ms", "5000");
  const reply = await p.connections.agent.request(
    p.subjects.call(context.agentId, "before_tool_call"),
    bad.data,
    { timeout: 5000, headers: h },
  );
  return reply.headers?.get("Hookbus-Error-Code");
}
