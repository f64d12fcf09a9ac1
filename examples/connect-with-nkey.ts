/**
 * An agent connecting as its own NATS user (docs/security.md "Deploying it"): the seed file
 * `hookbus auth` wrote for it and the inbox prefix its user may subscribe to. Then one call.
 *   NATS_URL=nats://nats:4222 HOOKBUS_NKEY_FILE=keys/agent-support-bot.nk npx tsx examples/connect-with-nkey.ts
 */
import { connect, nkeyAuthenticator } from "@nats-io/transport-node";
import { HookbusClient, inboxPrefixFor, isHookbusBlockedError, readNkeySeedFile } from "hookbus";

const nc = await connect({
  servers: process.env.NATS_URL ?? "nats://nats:4222",
  authenticator: nkeyAuthenticator(
    readNkeySeedFile(process.env.HOOKBUS_NKEY_FILE ?? "keys/agent-support-bot.nk"),
  ),
  inboxPrefix: inboxPrefixFor("hookbus", "agent", "support-bot"),
});
const client = await HookbusClient.connect({ nc });

try {
  const ctx = { agentId: "support-bot", sessionKey: "conv-1", runId: "run-1" };
  await client.beforeToolCall(ctx, { toolName: "exec", params: { command: "ls" } });
  console.log("exec: allowed");
} catch (error) {
  if (!isHookbusBlockedError(error)) throw error;
  console.log(`exec: blocked by ${error.blockedBy}: ${error.blockReason}`);
} finally {
  await client.close();
  await nc.drain();
}
