/**
 * What every adapter test shares (issue 13's "Tests"): the policies it names, and a pipeline that
 * registers each policy on its hooks in the order given (priority 100, 101, ...).
 */
import { definePolicy, type DecisionRecord, type Policy } from "../../../src/index.js";
import { startPipeline, type Pipeline } from "../pipeline/harness.js";

export const noExec = definePolicy({
  name: "no-exec",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" ? { block: true, blockReason: "exec is not allowed" } : undefined,
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

export const blockSecrets = definePolicy({
  name: "block-secrets",
  hooks: {
    before_response_emit: (event) =>
      event.content.includes("SECRET")
        ? { block: true, blockReason: "the answer carries a secret" }
        : undefined,
  },
});

/** A pipeline on `url` serving `policies`, each registered on its hooks in the order given. */
export function pipelineWith(
  url: string,
  policies: Policy[],
  clientTimeoutMs?: number,
): Promise<Pipeline> {
  return startPipeline(url, {
    ...(clientTimeoutMs === undefined ? {} : { clientTimeoutMs }),
    registry: {
      policies: policies.map((p, i) => ({
        name: p.name,
        hooks: Object.keys(p.hooks),
        priority: 100 + i,
      })),
    },
    policies,
  });
}

/** The pipeline's decision records of one hook, in log order. */
export async function decisionsOf(p: Pipeline, hook: string): Promise<DecisionRecord[]> {
  return (await p.readLog())
    .map((s) => s.record)
    .filter((r): r is DecisionRecord => r.kind === "decision" && r.hook === hook);
}
