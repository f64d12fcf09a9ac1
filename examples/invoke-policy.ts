/**
 * Testing a policy in process, without NATS (docs/policy-workers.md): `invokePolicy` is what the
 * worker runs for each request, and `MemorySessionStateStore` keeps session state in memory.
 *   npx tsx examples/invoke-policy.ts
 */
import { invokePolicy, MemorySessionStateStore } from "hookbus";
import { noEmailAfterWeb } from "./no-email-after-web-policy.js";

const state = new MemorySessionStateStore();
const ctx = { agentId: "a", sessionKey: "s", runId: "r" };

const before = await invokePolicy(
  noEmailAfterWeb,
  "before_tool_call",
  { toolName: "email.send", params: {} },
  ctx,
  { callId: "test-1", state },
);
await invokePolicy(noEmailAfterWeb, "after_tool_call", { toolName: "web_fetch", params: {} }, ctx, {
  callId: "test-2",
  state,
});
const after = await invokePolicy(
  noEmailAfterWeb,
  "before_tool_call",
  { toolName: "email.send", params: {} },
  ctx,
  { callId: "test-3", state },
);
// result: { status: "ok" | "error" | "invalid", verdict?, error?: { code, message, details? }, latencyMs }
console.log(JSON.stringify({ status: before.status, verdict: before.verdict ?? null }));
console.log(JSON.stringify({ status: after.status, verdict: after.verdict ?? null }));
