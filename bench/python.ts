/**
 * `npm run bench:python`: a Python worker's latency per decision against the TypeScript
 * worker's, on the same policy (the conformance policy, examples/), in one run: each serves
 * alone on a private nats-server, and the bench asks it as a coordinator does (a PolicyRequest
 * on `<ns>.policy.conformance.before_tool_call` with a deadline), 1 and 16 requests in flight,
 * interleaved rounds. Needs `bash scripts/setup.sh` (.tools/python).
 */
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { connect, headers, type NatsConnection } from "@nats-io/transport-node";
import { startWorkerProcess, type WorkerProcess } from "../src/conformance/processes.js";
import { findNatsServer } from "../src/testing/nats.js";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const ROUNDS = 2;
const WORKERS: Record<string, string[]> = {
  typescript: [
    process.execPath,
    "bin/hookbus.js",
    "worker",
    "examples/conformance-policy.ts",
    "--log-level",
    "warn",
    "--state",
    "memory",
  ],
  python: [
    ".tools/python/bin/hookbus-worker",
    "examples/python/conformance_policy.py:conformance",
    "--log-level",
    "warning",
  ],
};

function body(tool: string, params: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(
    JSON.stringify({
      callId: randomUUID(),
      hook: "before_tool_call",
      context: { agentId: "bench", sessionKey: "bench" },
      event: { toolName: tool, params },
    }),
  );
}

async function latencies(nc: NatsConnection, subject: string, inFlight: number) {
  const h = headers();
  h.set("Hookbus-Timeout-Ms", "5000");
  const ask = () =>
    nc.request(subject, body("conformance_verdict", { verdict: { block: false } }), {
      timeout: 5000,
      headers: h,
    });
  for (let i = 0; i < 300; i++) await ask();
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = 0; i < REQUESTS / inFlight; i++) {
        const t = performance.now();
        await ask();
        samples.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99), perSecond: samples.length / seconds };
}

async function serving(nc: NatsConnection, subject: string, worker: WorkerProcess) {
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await nc.request(subject, body("noop", {}), { timeout: 1000 });
      return;
    } catch {
      if (Date.now() > until) throw new Error(`worker did not start: ${worker.output()}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

if (!existsSync(WORKERS.python![0]!)) {
  console.error("bench:python needs the Python SDK: run `bash scripts/setup.sh` first");
  process.exit(1);
}
const server = await findNatsServer({ own: true });
const nc = await connect({ servers: server.url });
const rows: string[] = [];
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [language, command] of Object.entries(WORKERS)) {
      const namespace = `bench-${language.slice(0, 2)}-${round}`;
      const subject = `${namespace}.policy.conformance.before_tool_call`;
      const worker = startWorkerProcess(command, {
        HOOKBUS_CLI_SOURCE: "1",
        NATS_URL: server.url,
        HOOKBUS_NAMESPACE: namespace,
      });
      try {
        await serving(nc, subject, worker);
        for (const inFlight of [1, 16]) {
          const r = await latencies(nc, subject, inFlight);
          rows.push(
            `${String(round).padEnd(5)}  ${language.padEnd(10)}  ${String(inFlight).padEnd(9)}  ` +
              `${r.p50.toFixed(3).padStart(8)}  ${r.p99.toFixed(3).padStart(8)}  ${Math.round(r.perSecond).toString().padStart(8)}`,
          );
        }
      } finally {
        worker.signal("SIGTERM");
        await worker.exited;
      }
    }
  }
  console.log(`requests per row: ${REQUESTS} (after 300 warm-up), one worker process each`);
  console.log("round  worker      in flight  p50 (ms)  p99 (ms)  req/s");
  for (const row of rows) console.log(row);
} finally {
  await nc.close();
  await server.stop();
}
