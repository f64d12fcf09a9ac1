/**
 * Serving a policy from your own program (what `hookbus worker` does): connect, run, and on
 * SIGTERM/SIGINT stop (in-flight calls are answered first) and close the connection. Start more
 * processes to scale it.
 *   NATS_URL=nats://127.0.0.1:4222 npx tsx examples/run-policy.ts
 */
import { connect } from "@nats-io/transport-node";
import { runPolicy } from "hookbus";
import { noShell } from "./no-shell-policy.js";

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const runner = await runPolicy(noShell, {
  nc,
  namespace: process.env.HOOKBUS_NAMESPACE ?? "hookbus",
});
const stop = async () => {
  await runner.stop();
  await nc.drain();
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
console.log("no-shell is serving; Ctrl-C stops it");
