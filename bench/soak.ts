/**
 * Soak benchmark: a coordinator (its own process, started through the CLI) under steady load for
 * SOAK_DURATION_S seconds (default 600), with a large event every SOAK_LARGE_EVERY calls and a
 * slow policy that misses its deadline now and then (late verdicts, timed-out asks). Prints the
 * coordinator's RSS at start, at the 1-minute mark (or half-way in a short run), its peak and at
 * the end; the goal is flat memory: end within 20 % of the 1-minute mark.
 *
 *   npm run bench:soak                         # 10 minutes
 *   SOAK_DURATION_S=60 npm run bench:soak      # a short check
 */
import { connect } from "@nats-io/transport-node";
import { definePolicy, HookbusClient, MemorySessionStateStore, runPolicy } from "../src/index.js";
import { findNatsServer } from "../src/testing/nats.js";
import { rssMiB, startCli } from "./support/cli.js";
import { RegistryStore } from "../src/registry/store.js";
import { Subjects } from "../src/bus/subjects.js";

const durationS = Number(process.env.SOAK_DURATION_S ?? 600);
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 16);
const largeEvery = Number(process.env.SOAK_LARGE_EVERY ?? 200);
const largeBytes = Number(process.env.SOAK_LARGE_BYTES ?? 2 * 1024 * 1024);
const markS = Math.min(60, durationS / 2);
const namespace = `soak-${Date.now().toString(36)}`;

const server = await findNatsServer({ own: true });
const nc = await connect({ servers: server.url, maxReconnectAttempts: -1 });
const registry = await RegistryStore.open(nc, new Subjects(namespace));
await registry.apply({
  policies: [
    { name: "steady", hooks: ["before_tool_call"], priority: 10, timeoutMs: 500 },
    {
      name: "sometimes-late",
      hooks: ["before_tool_call"],
      priority: 1,
      timeoutMs: 100,
      failMode: "fail-open",
    },
  ],
});
const coordinator = startCli(["coordinator", "--namespace", namespace, "--log-level", "warn"], {
  NATS_URL: server.url,
});
let calls = 0;
const steady = definePolicy({
  name: "steady",
  hooks: { before_tool_call: (event) => ({ params: { ...event.params, checked: true } }) },
});
const late = definePolicy({
  name: "sometimes-late",
  hooks: {
    // One call in 50 answers after its 100 ms deadline: a late verdict the coordinator records.
    async before_tool_call(_event, _ctx, { callId }) {
      if (Number(callId.split("-").at(-1)) % 50 === 0) await new Promise((r) => setTimeout(r, 300));
      return undefined;
    },
  },
});
const runner = await runPolicy([steady, late], {
  nc,
  namespace,
  state: new MemorySessionStateStore(),
});
const client = await HookbusClient.connect({ nc, namespace, timeoutMs: 10_000 });

// Wait for the coordinator: a call succeeds.
for (const until = Date.now() + 30_000; ;) {
  try {
    await client.call("before_tool_call", ctx("warm"), event("warm", 10), { callId: "warm" });
    break;
  } catch (error) {
    if (Date.now() > until) throw error;
    await new Promise((r) => setTimeout(r, 200));
  }
}

function ctx(id: string) {
  return { agentId: "soak", sessionKey: `s-${id.length % 8}`, runId: "r", toolCallId: id };
}
function event(id: string, bytes: number) {
  return { toolName: "write", toolCallId: id, params: { body: "x".repeat(bytes) } };
}

const started = Date.now();
const endAt = started + durationS * 1000;
const samples: { t: number; rss: number }[] = [];
let errors = 0;
const sampler = setInterval(() => {
  void rssMiB(coordinator.pid).then((rss) => {
    if (rss !== undefined) samples.push({ t: (Date.now() - started) / 1000, rss });
  });
}, 1000);

async function loop(worker: number): Promise<void> {
  while (Date.now() < endAt) {
    const n = ++calls;
    const id = `c-${worker}-${n}`;
    const bytes = n % largeEvery === 0 ? largeBytes : 200;
    try {
      await client.call("before_tool_call", ctx(id), event(id, bytes), { callId: id });
    } catch {
      errors++;
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
clearInterval(sampler);

const at = (t: number) => samples.find((s) => s.t >= t)?.rss ?? Number.NaN;
const start = samples[0]?.rss ?? Number.NaN;
const mark = at(markS);
const peak = Math.max(...samples.map((s) => s.rss));
const end = samples.at(-1)?.rss ?? Number.NaN;
const drift = ((end - mark) / mark) * 100;
console.log(
  `soak: duration_s=${durationS} calls=${calls} errors=${errors} rate=${Math.round(calls / durationS)}/s ` +
    `rss_mib start=${start} at_${Math.round(markS)}s=${mark} peak=${peak} end=${end} ` +
    `end_vs_mark=${drift.toFixed(1)}%`,
);

await client.close();
await runner.stop();
coordinator.child.kill("SIGTERM");
await coordinator.exited;
await nc.close();
await server.stop();
