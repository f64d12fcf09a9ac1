/**
 * What ONE policy worker process costs per request: Node CPU (µs) and V8 heap allocated (KB),
 * measured inside the worker process itself, under the coordinator's load shape (64 requests in
 * flight, the request body and headers a coordinator sends, a read_file before_tool_call).
 *
 *   tsc -p tsconfig.bench.json && node .tmp/bench/bench/worker-cost.js [name=dir ...]
 *
 * Each `name=dir` is a compiled `src` directory (default: this build's) whose `runPolicy` serves
 * the bench policy in its own child process; `constant=` is a responder that parses nothing and
 * answers a constant (the floor). Rounds alternate between the children, so a neighbour's load
 * hits every side alike; the median of the rounds is printed. A/B of two checkouts: copy one
 * checkout's `.tmp/bench` aside and name both `src` directories.
 *   WORKER_COST_REQUESTS  requests per side per round (default 20000)
 *   WORKER_COST_ROUNDS    rounds (default 5)
 *   WORKER_COST_WARM=0    no unmeasured first round: a fresh process's cost, JIT included
 *   WORKER_COST_PROFILE=1 also profile each worker's last round with the inspector (self time by
 *                         function) and print its summary
 *   WORKER_COST_BODY_DEADLINE=name,...  the sides asked as a coordinator of protocol 2 asks: the
 *                         deadline as the body's `timeoutMs`, no header block (the others get
 *                         `Hookbus-Timeout-Ms`, as from a coordinator before it)
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { findNatsServer } from "../src/testing/nats.js";
import { BENCH_EVENT, laneContext } from "./support/decision-path.js";
import { serveWorker } from "./support/worker-cost-child.js";

const REQUESTS = Number(process.env.WORKER_COST_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.WORKER_COST_ROUNDS ?? 5);
const PROFILE = process.env.WORKER_COST_PROFILE === "1";
const WARM = process.env.WORKER_COST_WARM !== "0";
const CONCURRENCY = 64;
const TIMEOUT_MS = 5000;
const BODY_DEADLINE = new Set((process.env.WORKER_COST_BODY_DEADLINE ?? "").split(","));
const HERE = fileURLToPath(import.meta.url);

interface Side {
  name: string;
  namespace: string;
  child: ChildProcess;
  cpuUs: number[];
  kb: number[];
}

/** `name=dir` arguments; by default this build's own src directory. */
function sidesWanted(): Array<{ name: string; dir: string }> {
  const args = process.argv.slice(2).filter((arg) => arg.includes("="));
  const own = fileURLToPath(new URL("../src", import.meta.url));
  const wanted = args.length > 0 ? args : [`this=${own}`];
  return [{ name: "constant", dir: "" }, ...wanted.map(splitArg)];
}

function splitArg(arg: string): { name: string; dir: string } {
  const at = arg.indexOf("=");
  return { name: arg.slice(0, at), dir: arg.slice(at + 1) };
}

function startChild(url: string, name: string, dir: string, namespace: string): ChildProcess {
  return spawn(process.execPath, [HERE, "--serve", url, namespace, dir], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, WORKER_COST_NAME: name },
  });
}

/** Until the child's control subject answers (it is serving), or the deadline. */
async function ready(nc: NatsConnection, namespace: string, deadline: number): Promise<void> {
  for (;;) {
    try {
      await nc.request(`${namespace}.cost.ping`, "", { timeout: 1000 });
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

/** `REQUESTS` requests at concurrency, each a coordinator's policy request to the side. */
async function load(nc: NatsConnection, side: Side): Promise<void> {
  const subject = `${side.namespace}.policy.p1.before_tool_call`;
  const hdrs = natsHeaders();
  hdrs.set("Hookbus-Timeout-Ms", String(TIMEOUT_MS));
  const bodies = Array.from({ length: CONCURRENCY }, (_, lane) => ({
    hook: "before_tool_call",
    event: BENCH_EVENT,
    context: laneContext(lane),
  }));
  const inBody = BODY_DEADLINE.has(side.name);
  let next = 0;
  await Promise.all(
    bodies.map(async (body) => {
      while (next < REQUESTS) {
        const callId = `c${next++}`;
        if (inBody) {
          const data = JSON.stringify({ timeoutMs: TIMEOUT_MS, callId, ...body });
          await nc.request(subject, data, { timeout: TIMEOUT_MS });
        } else {
          const data = JSON.stringify({ callId, ...body });
          await nc.request(subject, data, { timeout: TIMEOUT_MS, headers: hdrs });
        }
      }
    }),
  );
}

async function round(nc: NatsConnection, side: Side, profile: boolean): Promise<void> {
  await nc.request(`${side.namespace}.cost.start`, profile ? "profile" : "", { timeout: 10_000 });
  await load(nc, side);
  const reply = await nc.request(`${side.namespace}.cost.stop`, "", { timeout: 60_000 });
  const cost = reply.json<{ cpuUs: number; bytes: number; profile?: string }>();
  side.cpuUs.push(cost.cpuUs / REQUESTS);
  side.kb.push(cost.bytes / 1024 / REQUESTS);
  if (cost.profile !== undefined) console.log(`\n${side.name}, profiled round:\n${cost.profile}`);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

async function main(): Promise<void> {
  const server = await findNatsServer();
  const nc = await connect({ servers: server.url });
  const stamp = Date.now().toString(36);
  const sides: Side[] = sidesWanted().map(({ name, dir }, i) => {
    const namespace = `wc${stamp}${i}`;
    return {
      name,
      namespace,
      child: startChild(server.url, name, dir, namespace),
      cpuUs: [],
      kb: [],
    };
  });
  try {
    const deadline = Date.now() + 60_000;
    for (const side of sides) await ready(nc, side.namespace, deadline);
    if (WARM) {
      for (const side of sides) await round(nc, side, false); // warm the JIT, not counted
      for (const side of sides) side.cpuUs.length = side.kb.length = 0;
    }
    for (let r = 1; r <= ROUNDS; r++) {
      const order = r % 2 === 0 ? [...sides].reverse() : sides;
      for (const side of order) await round(nc, side, PROFILE && r === ROUNDS);
    }
    console.log(
      `${REQUESTS} requests per side per round, ${ROUNDS} rounds, concurrency ${CONCURRENCY}:`,
    );
    console.table(
      sides.map((side) => ({
        side: side.name,
        cpu_us_per_request: median(side.cpuUs).toFixed(1),
        kb_per_request: median(side.kb).toFixed(2),
        rounds_us: side.cpuUs.map((us) => us.toFixed(1)).join(" "),
      })),
    );
  } finally {
    for (const side of sides) side.child.kill();
    await nc.drain();
    await server.stop();
  }
}

if (process.argv[2] === "--serve") {
  const [url, namespace, dir] = process.argv.slice(3) as [string, string, string];
  await serveWorker(url, namespace, dir === "" ? undefined : pathToFileURL(dir).href);
} else {
  await main();
}
