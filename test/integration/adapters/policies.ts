/**
 * The issue-13 acceptance policies every adapter test runs against (the same matrix for each
 * framework): one blocks `exec`, one rewrites a param, one redacts an email in the final answer,
 * one allows at most 3 tool calls per turn through after_llm_call only; and, where a test names
 * them, one removes a tool from what the model is offered and one blocks a final answer.
 */
import { definePolicy, type DecisionRecord, type Policy } from "../../../src/index.js";
import { startPipeline, type Pipeline } from "../pipeline/harness.js";

export const EMAIL = "alice@example.com";

export const noExec = definePolicy({
  name: "no-exec",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" ? { block: true, blockReason: "exec is not allowed" } : undefined,
  },
});

export const safePath = definePolicy({
  name: "safe-path",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "read_file" && String(event.params.path).startsWith("/etc/")
        ? { params: { path: "/tmp/sandbox/file" } }
        : undefined,
  },
});

export const redactEmail = definePolicy({
  name: "redact-email",
  hooks: {
    before_response_emit: (event) =>
      /@/.test(event.content)
        ? { content: event.content.replace(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, "[email]") }
        : undefined,
  },
});

export const maxThreeCalls = definePolicy({
  name: "max-3-calls",
  hooks: {
    after_llm_call: (event) =>
      event.toolCalls.length > 3
        ? { toolCalls: event.toolCalls.slice(0, 3).map((c) => ({ id: c.id })) }
        : undefined,
  },
});

export const hideDeleteAll = definePolicy({
  name: "hide-delete-all",
  hooks: {
    before_llm_call: (event) => ({
      tools: (event.tools ?? []).filter((t) => !("name" in t) || t.name !== "delete_all"),
    }),
  },
});

export const blockSecrets = definePolicy({
  name: "block-secrets",
  hooks: {
    before_response_emit: (event) =>
      event.content.includes("SECRET")
        ? { block: true, blockReason: "the answer carries a secret" }
        : undefined,
  },
});

/** The office hours bot: answers a greeting itself; fails (refusing, when fail-closed) on "forbidden". */
export const doorman = definePolicy({
  name: "doorman",
  hooks: {
    before_agent_reply: (event) => {
      if (event.cleanedBody.includes("forbidden")) throw new Error("the doorman cannot tell");
      return event.cleanedBody.startsWith("hello")
        ? { reply: { text: "Hi! The office opens at 9." }, reason: "greeting" }
        : undefined;
    },
  },
});

export const basePolicies: Policy[] = [noExec, safePath, redactEmail, maxThreeCalls];

/**
 * A coordinator and one worker per policy (priority in list order) on the server at `url`; the
 * policies named in `failClosed` are registered fail-closed (a failure blocks).
 */
export function policyPipeline(
  url: string,
  policies: Policy[] = basePolicies,
  clientTimeoutMs?: number,
  failClosed: readonly string[] = [],
): Promise<Pipeline> {
  return startPipeline(url, {
    ...(clientTimeoutMs === undefined ? {} : { clientTimeoutMs }),
    registry: {
      policies: policies.map((p, i) => ({
        name: p.name,
        hooks: Object.keys(p.hooks),
        priority: 100 + i,
        ...(failClosed.includes(p.name) ? { failMode: "fail-closed" as const } : {}),
      })),
    },
    policies,
  });
}

/** The before_tool_call decision records of the pipeline's log. */
export function beforeToolCallRecords(p: Pipeline): Promise<DecisionRecord[]> {
  return decisionsOf(p, "before_tool_call");
}

/** `policyPipeline` on a test file's NATS server. */
export function pipelineOn(nats: { url: () => string }) {
  return (
    policies?: Policy[],
    clientTimeoutMs?: number,
    failClosed?: readonly string[],
  ): Promise<Pipeline> => policyPipeline(nats.url(), policies, clientTimeoutMs, failClosed);
}

/** Where the test tools record the inputs they actually ran with. */
export function toolRuns() {
  return {
    exec: [] as unknown[],
    read_file: [] as unknown[],
    lookup: [] as unknown[],
    delete_all: [] as unknown[],
  };
}

/** The pipeline's decision records of one hook, in log order. */
export async function decisionsOf(p: Pipeline, hook: string): Promise<DecisionRecord[]> {
  return (await p.readLog())
    .map((s) => s.record)
    .filter((r): r is DecisionRecord => r.kind === "decision" && r.hook === hook);
}
