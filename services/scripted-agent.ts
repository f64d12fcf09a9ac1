/**
 * The scripted agent as a process: runs one session against whatever coordinators and workers
 * serve the namespace, prints each decision as NDJSON (or a readable line with --pretty), and
 * exits 0 when the session ran to its end.
 */
import "./runtime-check.js";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { connectNatsWithRetry, connectWaitMs } from "../src/bus/connect.js";
import { HookbusClient } from "../src/index.js";
import { formatStep } from "./scripted-agent/format.js";
import { runScriptedSession } from "./scripted-agent/session.js";

const { values } = parseArgs({
  options: {
    server: { type: "string" },
    namespace: { type: "string" },
    agent: { type: "string" },
    session: { type: "string" },
    pretty: { type: "boolean" },
    "wait-ms": { type: "string" },
  },
});

// Started beside NATS (compose): wait for it (HOOKBUS_CONNECT_WAIT_MS), logging on stderr.
const nc = await connectNatsWithRetry(
  { server: values.server, name: "hookbus-scripted-agent" },
  { waitMs: connectWaitMs(undefined), logger: pino({ level: "warn" }, pino.destination(2)) },
);
const namespace = values.namespace ?? process.env.HOOKBUS_NAMESPACE;
const client = await HookbusClient.connect({
  nc,
  ...(namespace === undefined ? {} : { namespace }),
});

// In a fresh deployment the registry may not be applied yet: wait for it (bounded).
const until = Date.now() + Number(values["wait-ms"] ?? 30_000);
while ((client.registryRevision ?? 0) === 0 && Date.now() < until)
  await new Promise((r) => setTimeout(r, 200));

try {
  await runScriptedSession(client, {
    ...(values.agent === undefined ? {} : { agentId: values.agent }),
    ...(values.session === undefined ? {} : { sessionKey: values.session }),
    onStep: (step) =>
      console.log(
        values.pretty === true
          ? formatStep(step)
          : JSON.stringify({ ...step, decision: undefined }),
      ),
  });
} finally {
  await client.close();
  await nc.drain();
}
