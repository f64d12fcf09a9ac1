/** What the approval tests share: a pipeline with a policy that asks for approval, on real NATS. */
import type { NatsConnection } from "@nats-io/transport-node";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import { applyRegistry } from "../faults/harness.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { type RegistryDocumentInput } from "../../../src/registry/document.js";

/**
 * `asker` asks for approval of every tool call; the params say on what terms (`t` timeoutMs,
 * `tb` timeoutBehavior, `g` approver group). `rewriter` (higher priority) redacts `secret`, so
 * the approval is for the rewritten params.
 */
export const asker = definePolicy({
  name: "asker",
  hooks: {
    before_tool_call(event) {
      const p = event.params as { t?: number; tb?: "deny" | "allow"; g?: string };
      return {
        requireApproval: {
          title: `run ${event.toolName}`,
          description: "a person must look at this",
          severity: "high",
          timeoutMs: p.t ?? 60_000,
          ...(p.tb === undefined ? {} : { timeoutBehavior: p.tb }),
          ...(p.g === undefined ? {} : { approvers: p.g }),
        },
      };
    },
  },
});

export const rewriter = definePolicy({
  name: "rewriter",
  hooks: {
    before_tool_call(event) {
      if (!("secret" in event.params)) return undefined;
      return { params: { ...event.params, secret: "[redacted]" } };
    },
  },
});

export const REGISTRY: RegistryDocumentInput = {
  policies: [
    {
      name: "rewriter",
      hooks: ["before_tool_call"],
      priority: 20,
      timeoutMs: 4000,
      failMode: "fail-closed",
    },
    { name: "asker", hooks: ["before_tool_call"], priority: 10, timeoutMs: 4000 },
  ],
};

export interface Pipeline {
  client: HookbusClient;
  coordinator?: Coordinator;
  runner: PolicyRunner;
}

export async function startPipeline(
  connect: () => Promise<NatsConnection>,
  namespace: string,
  options: { coordinator?: boolean; sweepMs?: number; agentId?: string } = {},
): Promise<Pipeline> {
  await applyRegistry(await connect(), namespace, REGISTRY);
  const runner = await runPolicy([asker, rewriter], {
    nc: await connect(),
    namespace,
    state: new MemorySessionStateStore(),
  });
  const coordinator =
    options.coordinator === false
      ? undefined
      : await startCoordinator({
          nc: await connect(),
          namespace,
          id: "c-approvals",
          approvalSweepMs: options.sweepMs ?? 200,
        });
  const client = await HookbusClient.connect({ nc: await connect(), namespace, timeoutMs: 8000 });
  return { client, runner, ...(coordinator === undefined ? {} : { coordinator }) };
}

export const ctx = (callId: string, agentId = "agent-ap") => ({
  agentId,
  sessionKey: "s-approvals",
  runId: "r-1",
  toolCallId: callId,
});

export const toolEvent = (callId: string, params: Record<string, unknown> = {}) => ({
  toolName: "shell",
  toolCallId: callId,
  params: { cmd: "rm -rf /tmp/x", ...params },
});
