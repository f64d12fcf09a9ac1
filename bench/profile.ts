/**
 * `npm run bench:profile`: where hookbus's own Node CPU goes on the decision path. Runs the same
 * set-up as `npm run bench` (agent, coordinator, three policy workers in one process; the
 * compiled code) without the baseline, profiles only the concurrent phase with the inspector, and
 * prints self time grouped by area and the top functions. Writes the raw profile to
 * `.tmp/profile/decision.cpuprofile` (open it in Chrome DevTools for the call tree).
 *   BENCH_PROFILE_CALLS   calls to profile (default 20000)
 *   BENCH_PROFILE_TOP     functions to list (default 40)
 *   BENCH_PROFILE_HEAP=1  also sample allocations (where the bytes per call are allocated)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { HookbusClient } from "../src/agent/index.js";
import { startCoordinator } from "../src/coordinator/index.js";
import { Subjects } from "../src/bus/subjects.js";
import { RegistryStore } from "../src/registry/store.js";
import { findNatsServer } from "../src/testing/nats.js";
import { definePolicy, runPolicy } from "../src/worker/index.js";
import { connectionOptions } from "../src/cli/connect.js";
import { CostMeter } from "./support/cost.js";
import {
  summarizeHeapProfile,
  summarizeProfile,
  type CpuProfile,
  type HeapProfile,
} from "./support/profile-summary.js";

const CALLS = Number(process.env.BENCH_PROFILE_CALLS ?? 20_000);
const TOP = Number(process.env.BENCH_PROFILE_TOP ?? 40);
const HEAP = process.env.BENCH_PROFILE_HEAP === "1";
/** BENCH_PROFILE_CPU=0: measure cost only, without the profiler's own overhead (A/B runs). */
const CPU = process.env.BENCH_PROFILE_CPU !== "0";
const CONCURRENCY = 64;
const NAMESPACE = `prof${Date.now().toString(36)}`;

async function main(): Promise<void> {
  const server = await findNatsServer();
  const conns: NatsConnection[] = [];
  const open = async (name: string) => {
    const nc = await connect({ ...connectionOptions({ server: server.url }), name });
    conns.push(nc);
    return nc;
  };
  const [agentNc, coordNc, workerNc] = [
    await open("agent"),
    await open("coordinator"),
    await open("worker"),
  ];
  const coordinator = await startCoordinator({ nc: coordNc, namespace: NAMESPACE });
  const policies = ["p1", "p2", "p3"].map((name) =>
    definePolicy({
      name,
      version: "1",
      hooks: {
        before_tool_call: (e) =>
          e.toolName === "exec" ? { block: true, blockReason: "no shell" } : undefined,
      },
    }),
  );
  const runner = await runPolicy(policies, { nc: workerNc, namespace: NAMESPACE });
  const registry = await RegistryStore.open(coordNc, new Subjects(NAMESPACE));
  await registry.apply({
    policies: policies.map((p, i) => ({
      name: p.name,
      hooks: ["before_tool_call"],
      priority: 30 - i * 10,
    })),
  });
  const client = await HookbusClient.connect({ nc: agentNc, namespace: NAMESPACE });
  const deadline = Date.now() + 5000;
  while (
    (client.isFastPath("before_tool_call") || coordinator.registry().revision === 0) &&
    Date.now() < deadline
  )
    await new Promise((r) => setTimeout(r, 20));

  const event = {
    toolName: "read_file",
    toolCallId: "call_1",
    params: { path: "/srv/data/report.csv", limit: 100 },
  };
  const contexts = Array.from({ length: CONCURRENCY }, (_, lane) => ({
    agentId: "bench-agent",
    sessionKey: `bench-session-${lane}`,
    runId: "run-1",
    toolName: "read_file",
    toolCallId: "call_1",
  }));
  const run = async (total: number) => {
    let next = 0;
    await Promise.all(
      contexts.map(async (context) => {
        while (next++ < total) await client.beforeToolCall(context, event);
      }),
    );
  };
  await run(2000); // warm the JIT and the stream files

  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 100 });
  if (CPU) await session.post("Profiler.start");
  if (HEAP)
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 4096,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  const meter = new CostMeter();
  const t0 = performance.now();
  await meter.measure(CALLS, () => run(CALLS));
  const seconds = (performance.now() - t0) / 1000;
  const profile = CPU
    ? ((await session.post("Profiler.stop")) as { profile: CpuProfile }).profile
    : undefined;
  const heap = HEAP
    ? ((await session.post("HeapProfiler.stopSampling")) as { profile: HeapProfile }).profile
    : undefined;
  session.disconnect();

  await client.close();
  await runner.stop();
  await coordinator.stop();
  for (const nc of conns) await nc.drain();
  await server.stop();

  mkdirSync(".tmp/profile", { recursive: true });
  if (profile) writeFileSync(".tmp/profile/decision.cpuprofile", JSON.stringify(profile));
  const cost = meter.perCall();
  console.log(
    `${CALLS} calls at concurrency ${CONCURRENCY}: ${(CALLS / seconds).toFixed(0)} calls/s, ` +
      `${cost.cpuUs.toFixed(0)} µs Node CPU and ${(cost.bytes / 1024).toFixed(1)} KB allocated per call${CPU ? " (profiler on)" : ""}`,
  );
  if (profile) console.log(summarizeProfile(profile, TOP));
  if (heap) {
    writeFileSync(".tmp/profile/decision.heapprofile", JSON.stringify(heap));
    console.log(summarizeHeapProfile(heap, TOP));
  }
}

await main();
