/**
 * Soak benchmark: a coordinator (its own process, started through the CLI) under steady load for
 * SOAK_DURATION_S seconds (default 600), with a large event every SOAK_LARGE_EVERY calls and a
 * slow policy that misses its deadline now and then (late verdicts, timed-out asks). Samples the
 * coordinator's RSS (/proc) and its V8 heap and external memory (its `--http` /metrics) every
 * second and ends with a verdict line: RSS at start, at the 1-minute mark (or half-way in a short
 * run), its peak and at the end, the heap beside it, and whether memory stayed flat (the goal: end
 * within 20 % of the mark) or grew, and if so whether JavaScript holds it (retention) or the
 * allocator does (fragmentation).
 *
 *   npm run bench:soak                                  # 10 minutes, glibc malloc
 *   SOAK_DURATION_S=60 npm run bench:soak               # a short check
 *   SOAK_ALLOCATOR=jemalloc npm run bench:soak          # the coordinator on jemalloc
 *   SOAK_HEAP_SNAPSHOTS=DIR npm run bench:soak          # heap snapshots at the mark and the end
 *                                                       # into DIR, and what grew between them
 *   SOAK_SAMPLES=FILE npm run bench:soak                # every sample, as JSON, into FILE
 *
 * The coordinator runs from dist/ (`npm run build` first), as an operator runs it.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { connect } from "@nats-io/transport-node";
import { definePolicy, HookbusClient, MemorySessionStateStore, runPolicy } from "../src/index.js";
import { findNatsServer } from "../src/testing/nats.js";
import { freePort } from "../src/testing/free-port.js";
import { rssMiB, startCli } from "./support/cli.js";
import { RegistryStore } from "../src/registry/store.js";
import { Subjects } from "../src/bus/subjects.js";
import { allocatorOf, jemallocEnv } from "../test/support/allocator.js";
import {
  heapSnapshotNodeOptions,
  readHeapSnapshot,
  scrapeHeap,
  takeHeapSnapshot,
} from "./support/process-memory.js";
import { formatHeapGrowth, summarizeHeapSnapshot } from "./support/heap-snapshot.js";
import { formatSoakVerdict, soakFigures, type SoakSample } from "./support/soak-report.js";

const durationS = Number(process.env.SOAK_DURATION_S ?? 600);
const concurrency = Number(process.env.SOAK_CONCURRENCY ?? 16);
const largeEvery = Number(process.env.SOAK_LARGE_EVERY ?? 200);
const largeBytes = Number(process.env.SOAK_LARGE_BYTES ?? 2 * 1024 * 1024);
const allocator = process.env.SOAK_ALLOCATOR ?? "glibc";
const snapshotDir =
  process.env.SOAK_HEAP_SNAPSHOTS === undefined
    ? undefined
    : resolve(process.env.SOAK_HEAP_SNAPSHOTS);
const markS = Math.min(60, durationS / 2);
const namespace = `soak-${Date.now().toString(36)}`;
/** A snapshot of a loaded coordinator on a busy machine takes seconds; this is its deadline. */
const SNAPSHOT_TIMEOUT_MS = 180_000;

if (allocator !== "glibc" && allocator !== "jemalloc") {
  throw new Error(`SOAK_ALLOCATOR must be glibc or jemalloc, got ${allocator}`);
}
const allocatorEnv = allocator === "jemalloc" ? jemallocEnv() : {};
if (snapshotDir !== undefined) mkdirSync(snapshotDir, { recursive: true });

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
const httpPort = await freePort();
const metricsUrl = `http://127.0.0.1:${httpPort}/metrics`;
const coordinator = startCli(
  [
    "coordinator",
    "--namespace",
    namespace,
    "--log-level",
    "warn",
    "--http",
    `127.0.0.1:${httpPort}`,
  ],
  {
    NATS_URL: server.url,
    ...allocatorEnv,
    ...(snapshotDir === undefined ? {} : { NODE_OPTIONS: heapSnapshotNodeOptions(snapshotDir) }),
  },
);
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
    if (Date.now() > until) {
      console.error(coordinator.output());
      throw error;
    }
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
const samples: SoakSample[] = [];
let errors = 0;
let running = true;
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function sample(): Promise<SoakSample | undefined> {
  const t = (Date.now() - started) / 1000;
  const [rss, heap] = await Promise.all([rssMiB(coordinator.pid), scrapeHeap(metricsUrl, 900)]);
  if (rss === undefined) return undefined;
  return heap === undefined ? { t, rssMiB: rss } : { t, rssMiB: rss, heap };
}

/**
 * One sample a second until the end; with snapshots, the mark's is taken right after the mark's
 * sample, so the snapshot's own memory is not in it (it is in the RSS after it: said below).
 */
async function sampleUntilEnd(): Promise<{ markSnapshot?: Promise<string> }> {
  let markSnapshot: Promise<string> | undefined;
  while (Date.now() < endAt) {
    const next = Date.now() + 1000;
    const s = await sample();
    if (s !== undefined) samples.push(s);
    if (
      snapshotDir !== undefined &&
      markSnapshot === undefined &&
      s !== undefined &&
      s.t >= markS
    ) {
      markSnapshot = takeHeapSnapshot(coordinator.pid, snapshotDir, SNAPSHOT_TIMEOUT_MS);
    }
    await delay(Math.max(0, next - Date.now()));
  }
  return markSnapshot === undefined ? {} : { markSnapshot };
}

async function loop(worker: number): Promise<void> {
  while (running) {
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

/** The end's snapshot is taken under load too, so both hold the same kind of in-flight work. */
async function reportHeapGrowth(markSnapshot: Promise<string> | undefined): Promise<void> {
  if (snapshotDir === undefined || markSnapshot === undefined) return;
  const markFile = await markSnapshot;
  const endFile = await takeHeapSnapshot(coordinator.pid, snapshotDir, SNAPSHOT_TIMEOUT_MS);
  const before = summarizeHeapSnapshot(await readHeapSnapshot(markFile));
  const after = summarizeHeapSnapshot(await readHeapSnapshot(endFile));
  console.log(`heap snapshots: ${markFile} (mark), ${endFile} (end)`);
  console.log(formatHeapGrowth(before, after, 25));
  console.log("(RSS after the mark includes the memory the mark's snapshot took to write)");
}

const loops = Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
const { markSnapshot } = await sampleUntilEnd();
const runningOn = allocatorOf(coordinator.pid);
await reportHeapGrowth(markSnapshot);
running = false;
await loops;
const run = {
  durationS,
  elapsedS: (Date.now() - started) / 1000,
  markS,
  calls,
  errors,
  allocator: runningOn,
  samples,
};
if (process.env.SOAK_SAMPLES !== undefined)
  writeFileSync(process.env.SOAK_SAMPLES, JSON.stringify(run));
console.log(formatSoakVerdict(run, soakFigures(run)));

await client.close();
await runner.stop();
coordinator.child.kill("SIGTERM");
await coordinator.exited;
await nc.close();
await server.stop();
