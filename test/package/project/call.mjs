// One agent call through the installed package: NATS_URL and HOOKBUS_NAMESPACE from the test.
import { connect } from "@nats-io/transport-node";
import { HookbusClient } from "hookbus";

const nc = await connect({ servers: process.env.NATS_URL });
const client = await HookbusClient.connect({ nc, namespace: process.env.HOOKBUS_NAMESPACE });
const deadline = Date.now() + 20_000;
while (client.isFastPath("before_tool_call")) {
  if (Date.now() > deadline) throw new Error("the registry never reached the client");
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const ctx = { agentId: "consumer", sessionKey: "s1", runId: "r1" };
const decision = await client.decide("before_tool_call", ctx, {
  toolName: "exec",
  params: { command: "rm -rf /" },
});
console.log(JSON.stringify(decision));
await client.close();
await nc.drain();
