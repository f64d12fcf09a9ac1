/**
 * Human approval end to end (docs/approvals.md): a policy asks a person before any payment runs,
 * the agent's before_tool_call waits for the answer (printing progress), and proceeds or stops.
 * This program serves the policy and runs the agent; answer from another terminal:
 *   npx hookbus registry apply examples/approval-registry.json
 *   npx hookbus coordinator &
 *   NATS_URL=nats://127.0.0.1:4222 npx tsx examples/approval-flow.ts
 *   npx hookbus approvals list
 *   npx hookbus approvals approve <id> --as alice --reason "expected invoice"
 */
import { connect } from "@nats-io/transport-node";
import { definePolicy, HookbusClient, isHookbusBlockedError, runPolicy } from "hookbus";

const paymentsApproval = definePolicy({
  name: "payments-approval",
  hooks: {
    before_tool_call(event) {
      if (event.toolName !== "wire_money") return undefined;
      return {
        requireApproval: {
          title: `wire ${String(event.params.amount)} ${String(event.params.currency)}`,
          description: `to ${String(event.params.to)}`,
          severity: "high",
          timeoutMs: Number(process.env.APPROVAL_TIMEOUT_MS ?? 300_000),
          timeoutBehavior: "deny",
        },
      };
    },
  },
});

const namespace = process.env.HOOKBUS_NAMESPACE ?? "hookbus";
const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const runner = await runPolicy(paymentsApproval, { nc, namespace });
const hookbus = await HookbusClient.connect({ nc, namespace, timeoutMs: 5000 });

const ctx = { agentId: "billing-bot", sessionKey: `invoice-${Date.now()}`, runId: "run-1" };
const params = { amount: 1200, currency: "EUR", to: "ACME GmbH" };
try {
  const decision = await hookbus.beforeToolCall(
    { ...ctx, toolCallId: "pay-1" },
    { toolName: "wire_money", toolCallId: "pay-1", params },
    {
      // Told once when the request is open, then only when it changes (a group approved).
      onApproval: (progress) => {
        console.log(`pending approval ${progress.id}: ${progress.request.title}`);
        console.log(`  answer with: npx hookbus approvals approve ${progress.id} --as alice`);
      },
    },
  );
  const by = decision.resolvedApproval?.by.join(", ") ?? "nobody";
  console.log(`approved by ${by}: wiring ${JSON.stringify(decision.params ?? params)}`);
} catch (error) {
  if (!isHookbusBlockedError(error)) throw error;
  console.log(`not wired: ${error.decision.blockReason ?? "blocked"}`);
} finally {
  await hookbus.close();
  await runner.stop();
  await nc.drain();
}
