/**
 * The conformance policy in TypeScript: the behaviour `hookbus conformance worker` drives
 * (docs/conformance.md). Check the TypeScript worker SDK with it:
 *   npx hookbus conformance worker --policy conformance -- npx hookbus worker examples/conformance-policy.ts
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { definePolicy, type PolicyTools } from "hookbus";

type Params = Record<string, unknown>;

async function beforeToolCall(
  event: { toolName: string; params: Params },
  tools: PolicyTools,
): Promise<unknown> {
  const { params } = event;
  switch (event.toolName) {
    case "conformance_sleep":
      // Aborted at the caller's deadline; the SDK then sends nothing.
      await sleep(Number(params["ms"]), undefined, { signal: tools.signal });
      return undefined;
    case "conformance_verdict":
      return params["verdict"];
    case "conformance_fail":
      throw new Error(typeof params["message"] === "string" ? params["message"] : "asked to fail");
    case "conformance_digest": {
      const text = Buffer.from(String(params["text"]), "utf8");
      return {
        params: { sha256: createHash("sha256").update(text).digest("hex"), bytes: text.length },
      };
    }
    case "conformance_facts":
      // The call's facts as the SDK handed them over (docs/facts.md), echoed for the kit.
      return { params: { facts: tools.facts ?? null } };
    case "conformance_whoami":
      return { params: { pid: process.pid } };
    case "conformance_count":
      return { params: { count: await tools.state.update<number>("count", (n) => (n ?? 0) + 1) } };
    default:
      return undefined;
  }
}

const none = () => undefined;

export const conformance = definePolicy({
  name: "conformance",
  version: "1.0.0",
  hooks: {
    before_agent_reply: none,
    before_llm_call: none,
    after_llm_call: none,
    before_tool_call: (event, _ctx, tools) => beforeToolCall(event, tools) as never,
    before_tool_result: none,
    before_response_emit: none,
    async after_tool_call(event, _ctx, tools) {
      if (event.toolName === "conformance_sleep") await sleep(Number(event.params["ms"]));
      await tools.state.update<string[]>("observed", (seen) => [...(seen ?? []), tools.callId]);
    },
  },
});
