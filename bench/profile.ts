/**
 * `npm run bench:profile`: where hookbus's own Node CPU goes on the decision path. Runs the same
 * set-up as `npm run bench` (agent, coordinator, three policy workers in one process; the
 * compiled code) without the baseline, profiles only the concurrent phase with the inspector, and
 * prints self time grouped by area and the top functions. Writes the raw profile to
 * `.tmp/profile/decision.cpuprofile` (open it in Chrome DevTools for the call tree).
 *   BENCH_PROFILE_CALLS   calls to profile (default 20000)
 *   BENCH_PROFILE_TOP     functions to list (default 40)
 *   BENCH_PROFILE_HEAP=1  also sample allocations (where the bytes per call are allocated)
 *   BENCH_PROFILE_CEDAR=1 the Cedar side of `bench:cedar` instead: its 100 rules, no worker,
 *                         a request never seen before on every call
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { findNatsServer } from "../src/testing/nats.js";
import { CostMeter } from "./support/cost.js";
import {
  BenchConnections,
  concurrent,
  laneCall,
  openRoles,
  startDecisionPath,
  type RoleConnections,
} from "./support/decision-path.js";
import { hundredRules, startCedarPath } from "./support/cedar-path.js";
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
const CEDAR = process.env.BENCH_PROFILE_CEDAR === "1";
const CONCURRENCY = 64;
const NAMESPACE = `prof${Date.now().toString(36)}`;

/** The workers' decision path of `npm run bench`, or the Cedar-only one of `bench:cedar`. */
async function startPath(roles: RoleConnections) {
  if (CEDAR) {
    const path = await startCedarPath(roles, NAMESPACE, hundredRules(), {
      fresh: true,
      lanes: CONCURRENCY,
    });
    return { hookbus: path, call: path.call };
  }
  const hookbus = await startDecisionPath(roles, NAMESPACE);
  return { hookbus, call: laneCall(hookbus.client, CONCURRENCY) };
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  const conns = new BenchConnections(server.url);
  const { hookbus, call } = await startPath(await openRoles(conns));
  const run = (total: number) => concurrent(call, total, CONCURRENCY);
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

  await hookbus.stop();
  await conns.drain();
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
