/**
 * `npm run bench:request`: Node CPU per request of nats.js's `nc.request()` against hookbus's
 * shared reply inbox (src/bus/reply-inbox.ts), interleaved, on a private nats-server. The
 * responder runs in this process too, so both rows include its cost (docs/performance.md).
 */
import { connect } from "@nats-io/transport-node";
import { ReplyInbox } from "../src/bus/reply-inbox.js";
import { findNatsServer } from "../src/testing/nats.js";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 40_000);
const IN_FLIGHT = 16;
const ROUNDS = 3;

async function cpuPerRequest(request: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 2000; i++) await request();
  const before = process.cpuUsage();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = 0; i < REQUESTS / IN_FLIGHT; i++) await request();
    }),
  );
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / REQUESTS;
}

const server = await findNatsServer();
const requester = await connect({ servers: server.url });
const responder = await connect({ servers: server.url });
try {
  responder.subscribe("echo", {
    callback: (_error, msg) => {
      msg.respond(msg.data);
    },
  });
  await responder.flush();
  const data = new TextEncoder().encode(JSON.stringify({ hello: "world" }));
  const inbox = ReplyInbox.of(requester);
  const rows: Array<{ round: number; nc_request_us: string; shared_inbox_us: string }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const direct = await cpuPerRequest(() => requester.request("echo", data, { timeout: 5000 }));
    const shared = await cpuPerRequest(() => inbox.request("echo", data, { timeout: 5000 }));
    rows.push({ round, nc_request_us: direct.toFixed(1), shared_inbox_us: shared.toFixed(1) });
  }
  console.table(rows);
} finally {
  await requester.drain();
  await responder.drain();
  await server.stop();
}
