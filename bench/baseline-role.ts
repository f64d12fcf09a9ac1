/**
 * One role of the bare-NATS baseline as its own process, for the benchmark's role-per-process
 * line (bench/support/process-shape.ts starts it):
 *
 *   node baseline-role.js coordinator PREFIX STREAM
 *   node baseline-role.js responder POLICY PREFIX STREAM
 *
 * Connects to NATS_URL with the hookbus services' client settings, prints `ready` once it serves,
 * and on SIGTERM/SIGINT stops its role, drains and exits.
 */
import { connect } from "@nats-io/transport-node";
import { connectionOptions } from "../src/bus/connect.js";
import { serveCoordinator, serveResponder, type BaselineRole } from "./baseline.js";

async function start(argv: string[]): Promise<BaselineRole> {
  const [role, ...rest] = argv;
  const server = process.env.NATS_URL;
  if (server === undefined || server === "") throw new Error("NATS_URL is not set");
  const nc = await connect({ ...connectionOptions({ server }), name: `baseline-${role}` });
  let served: BaselineRole;
  if (role === "coordinator" && rest.length === 2) {
    served = await serveCoordinator(nc, { prefix: rest[0]!, stream: rest[1]! });
  } else if (role === "responder" && rest.length === 3) {
    served = serveResponder(nc, rest[0]!, { prefix: rest[1]!, stream: rest[2]! });
  } else {
    await nc.close();
    throw new Error(
      `usage: baseline-role coordinator PREFIX STREAM | responder POLICY PREFIX STREAM`,
    );
  }
  // The subscription is registered with the server before anyone is told it serves.
  await nc.flush();
  return {
    async stop() {
      await served.stop();
      await nc.drain();
    },
  };
}

const role = await start(process.argv.slice(2));
process.stdout.write("ready\n");
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    role.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`baseline-role: stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  });
}
