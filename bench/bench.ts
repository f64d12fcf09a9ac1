/**
 * `npm run bench`: hookbus against a bare-NATS baseline of the same shape, on the same server, in
 * one run, reported as ratios (timings on shared machines are noisy; ratios of interleaved runs
 * are not). Every side runs in this one process (agent, coordinator and workers, or the
 * baseline's three roles), so its Node CPU and heap allocation per call are the whole cost of a
 * call outside nats-server. `npm run bench` runs it compiled (tsconfig.bench.json → .tmp/bench).
 * Two more sides, each hookbus in a namespace of its own, measure what a feature adds to a call's
 * Node CPU: signed decisions (a coordinator signing key, docs/security.md; `sign_cpu_pct`, issue
 * 21 budgets 5 %) and per-subject encryption (a KEK, docs/privacy.md; `encrypt_cpu_pct`, issue 36
 * budgets 5 %). They run in rotating rounds between two plain paths, one started before them and
 * one after (bench/support/bracketed-cost.ts: a path's start order costs by itself), and
 * `aa_cpu_pct`, the two plain paths against each other, is the noise floor of the same run.
 * A last measurement runs the same calls with every role in its own process: hookbus's coordinator
 * and three workers through the CLI, the baseline's roles as bench/baseline-role.ts, the callers
 * here (bench/support/process-shape.ts); its `processes:` line comes before the last one, then the
 * `facts:` line of bench/support/facts-run.ts (shell facts alone, as `npm run bench:facts`) and
 * the `stream:` line of bench/stream.ts (a guarded streamed answer, as `npm run bench:stream`).
 * `BENCH_PROCESSES=0` skips it.
 * The LAST line is machine-readable (its fields: bench/support/bench-line.ts):
 *   bench: p50_ratio=<hookbus/baseline> p99_ratio=<…> throughput_ratio=<hookbus/baseline> cpu_ratio=<…> alloc_ratio=<…> fastpath_us=<…> replay_rps=<…> sign_cpu_pct=<…> sign_work_pct=<…> encrypt_cpu_pct=<…> aa_cpu_pct=<…> seal_work_pct=<…>
 * `cpu_ratio` and `alloc_ratio` are the in-process Node CPU and V8 heap bytes allocated per call at
 * concurrency 64, hookbus / baseline, from the same throughput rounds as `throughput_ratio`.
 * `sign_work_pct` and `seal_work_pct` are the signer's and the sealer's own work per record
 * measured alone (steady where the A/B is noisy), as a share of hookbus's CPU per call.
 */
import { randomBytes } from "node:crypto";
import { findNatsServer } from "../src/testing/nats.js";
import { startBaseline } from "./baseline.js";
import { formatBenchLine } from "./support/bench-line.js";
import { measureFastPath } from "./fast-path.js";
import { CostMeter } from "./support/cost.js";
import {
  BENCH_EVENT,
  BenchConnections,
  concurrent,
  laneCall,
  laneContext,
  openRoles,
  startDecisionPath,
} from "./support/decision-path.js";
import {
  measureProcessShape,
  type CpuPerCall,
  type ProcessShapeResult,
} from "./support/process-shape.js";
import { factsLine, measureShellFacts } from "./support/facts-run.js";
import { measureReplay } from "./support/replay-run.js";
import { measureStream } from "./support/stream-run.js";
import { createSigningKey, signingKeyFromSeed } from "../src/log/sign/keys.js";
import { parseKek } from "../src/privacy/kek.js";
import { signWorkPerRecordUs } from "./support/sign-work.js";
import { clearBenchRecord, sealWorkPerRecordUs } from "./support/seal-work.js";
import { bracketedCost, describePct } from "./support/bracketed-cost.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SEQUENTIAL_PER_ROUND = Number(process.env.BENCH_SEQUENTIAL ?? 400);
const CONCURRENT_CALLS = Number(process.env.BENCH_CONCURRENT_CALLS ?? 3000);
const CONCURRENCY = 64;
/** Rounds of the signing and encryption A/B: 8 puts each of its 4 sides in each place twice. */
const SIGN_ROUNDS = Number(process.env.BENCH_SIGN_ROUNDS ?? 8);
const REPLAY_RECORDS = Number(process.env.BENCH_REPLAY_RECORDS ?? 20_000);
const PROCESSES = process.env.BENCH_PROCESSES !== "0";
const NAMESPACE = `bench${Date.now().toString(36)}`;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function sequential(call: () => Promise<unknown>, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    into.push(performance.now() - t0);
  }
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  // Both sides use the same client settings: those of hookbus services (src/cli/connect.ts).
  const conns = new BenchConnections(server.url);
  const roles = await openRoles(conns);
  const baseline = await startBaseline(roles.agent, roles.coordinator, roles.worker);
  const hookbus = await startDecisionPath(roles, NAMESPACE);
  const signedPath = await startDecisionPath(roles, `${NAMESPACE}s`, {
    signingKey: signingKeyFromSeed(createSigningKey().seed),
  });
  const sealedPath = await startDecisionPath(roles, `${NAMESPACE}e`, {
    privacy: { kek: parseKek(randomBytes(32).toString("hex"), "bench") },
  });
  // Started last, so the A/B's plain sides bracket the signed and the encrypted one.
  const plainAgainPath = await startDecisionPath(roles, `${NAMESPACE}a`);

  const contexts = Array.from({ length: CONCURRENCY }, (_, lane) => laneContext(lane));
  const hookbusCall = laneCall(hookbus.client, CONCURRENCY);
  const signedCall = laneCall(signedPath.client, CONCURRENCY);
  const sealedCall = laneCall(sealedPath.client, CONCURRENCY);
  const plainAgainCall = laneCall(plainAgainPath.client, CONCURRENCY);
  const baselineCall = (lane = 0) =>
    baseline.call({ hook: "before_tool_call", context: contexts[lane]!, event: BENCH_EVENT });

  // Warm both paths (JIT, connections, stream files).
  await sequential(baselineCall, 300, []);
  await sequential(() => hookbusCall(0), 300, []);
  await sequential(() => signedCall(0), 300, []);
  // Concurrent, so every lane's session has its data key before the A/B.
  await concurrent(sealedCall, 1000, CONCURRENCY);
  await sequential(() => plainAgainCall(0), 300, []);

  const lat = { baseline: [] as number[], hookbus: [] as number[] };
  for (let round = 0; round < ROUNDS; round++) {
    await sequential(baselineCall, SEQUENTIAL_PER_ROUND, lat.baseline);
    await sequential(() => hookbusCall(0), SEQUENTIAL_PER_ROUND, lat.hookbus);
  }
  const tput = { baseline: [] as number[], hookbus: [] as number[] };
  const cost = { baseline: new CostMeter(), hookbus: new CostMeter() };
  for (let round = 0; round < 2; round++) {
    tput.baseline.push(
      await cost.baseline.measure(CONCURRENT_CALLS, () =>
        concurrent(baselineCall, CONCURRENT_CALLS, CONCURRENCY),
      ),
    );
    tput.hookbus.push(
      await cost.hookbus.measure(CONCURRENT_CALLS, () =>
        concurrent(hookbusCall, CONCURRENT_CALLS, CONCURRENCY),
      ),
    );
  }
  const features = await bracketedCost({
    plain: hookbusCall,
    candidates: { signed: signedCall, sealed: sealedCall },
    plainAgain: plainAgainCall,
    rounds: SIGN_ROUNDS,
    calls: CONCURRENT_CALLS,
    concurrency: CONCURRENCY,
  });
  // What the encrypted path seals for the benchmark call, in clear (for seal_work_pct).
  const clearRecord = await clearBenchRecord(roles.coordinator, NAMESPACE);
  const fast = await measureFastPath();

  await hookbus.stop();
  await signedPath.stop();
  await sealedPath.stop();
  await plainAgainPath.stop();
  await baseline.stop();
  let processes: (ProcessShapeResult & { seconds: number }) | undefined;
  if (PROCESSES) {
    const t0 = performance.now();
    const measured = await measureProcessShape({
      url: server.url,
      conns,
      namespace: `${NAMESPACE}p`,
      rounds: ROUNDS,
      sequentialPerRound: SEQUENTIAL_PER_ROUND,
      concurrentCalls: CONCURRENT_CALLS,
      concurrency: CONCURRENCY,
      sequential,
    });
    processes = { ...measured, seconds: (performance.now() - t0) / 1000 };
  }
  await conns.drain();
  await server.stop();
  // Replay runs alone, after the call benchmark, in a child process with its own server.
  const replayRps = await measureReplay(REPLAY_RECORDS);
  const streamLine = await measureStream();
  const facts = await measureShellFacts();

  const stats = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  };
  const b = stats(lat.baseline);
  const h = stats(lat.hookbus);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const bt = mean(tput.baseline);
  const ht = mean(tput.hookbus);
  const f = (n: number, d = 3) => n.toFixed(d);
  const row = (side: string, lat: { p50: number; p99: number }, callsPerS: number) =>
    `${side.padEnd(17)}${f(lat.p50).padStart(6)}   ${f(lat.p99).padStart(6)}   ${callsPerS.toFixed(0).padStart(7)}`;
  console.log(
    `nats: ${server.source} ${server.url}; ${ROUNDS}×${SEQUENTIAL_PER_ROUND} sequential calls per side, ${CONCURRENT_CALLS} calls ×2 at concurrency ${CONCURRENCY}`,
  );
  console.log(`                 p50 ms   p99 ms   calls/s`);
  console.log(row("baseline", b, bt));
  console.log(row("hookbus", h, ht));
  const bc = cost.baseline.perCall();
  const hc = cost.hookbus.perCall();
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  console.log(
    `Node CPU per call at concurrency ${CONCURRENCY}: baseline ${bc.cpuUs.toFixed(0)} µs, hookbus ${hc.cpuUs.toFixed(0)} µs (${f(hc.cpuUs / bc.cpuUs, 2)}×)`,
  );
  const { signed, sealed } = features.candidates;
  // Records of the benchmark's calls are ~2 KB as stored; measured with 2 KB.
  const workUs = signWorkPerRecordUs(2048);
  const workPct = (workUs / hc.cpuUs) * 100;
  const sealUs = sealWorkPerRecordUs(clearRecord);
  const sealPct = (sealUs / hc.cpuUs) * 100;
  const us = (n: number) => `${n.toFixed(0)} µs`;
  console.log(
    `Node CPU per call in ${SIGN_ROUNDS} rotating rounds: ${us(features.plainUs)} plain (two paths, started first and last), ${us(signed.us)} signed, ${us(sealed.us)} encrypted; the plain paths against each other ${describePct(features.aaPct, features.aaPcts)}`,
  );
  console.log(
    `signed decisions (a coordinator signing key): median ${describePct(signed.medianPct, signed.pcts)}; signing work per record (hash, batch JSON and Ed25519 per 256, measured alone): ${f(workUs, 2)} µs = ${f(workPct, 2)} % of hookbus's CPU per call`,
  );
  console.log(
    `encrypted records (a KEK, sealed per session): median ${describePct(sealed.medianPct, sealed.pcts)}; sealing work per record (measured alone): ${f(sealUs, 2)} µs = ${f(sealPct, 2)} % of hookbus's CPU per call`,
  );
  console.log(
    `V8 heap allocated per call: baseline ${kb(bc.bytes)} KB, hookbus ${kb(hc.bytes)} KB (${f(hc.bytes / bc.bytes, 2)}×)`,
  );
  console.log(
    `replay: ${replayRps.toFixed(0)} records/s (${REPLAY_RECORDS} records, 3 in-process policies)`,
  );
  console.log(
    `fast path (no policy on the hook): ${f(fast.usPerCall, 2)} µs/call over ${fast.iterations} calls`,
  );
  if (processes !== undefined) {
    const pb = stats(processes.baseline.latencies);
    const ph = stats(processes.hookbus.latencies);
    const pbt = mean(processes.baseline.throughputs);
    const pht = mean(processes.hookbus.throughputs);
    console.log(
      `roles as processes (hookbus: coordinator + 3 workers via the CLI; baseline: its coordinator + 3 responders; callers here):`,
    );
    console.log(row("baseline", pb, pbt));
    console.log(row("hookbus", ph, pht));
    const pbc = processes.baseline.cpuUsPerCall;
    const phc = processes.hookbus.cpuUsPerCall;
    if (pbc !== undefined && phc !== undefined) {
      const us = (n: number) => n.toFixed(0);
      const parts = (c: CpuPerCall) =>
        `caller ${us(c.caller)} + coordinator ${us(c.coordinator)} + workers ${c.workers.map(us).join("/")}`;
      console.log(
        `Node CPU per call at concurrency ${CONCURRENCY}, all the side's processes: baseline ${us(pbc.total)} µs (${parts(pbc)}), hookbus ${us(phc.total)} µs (${parts(phc)}) (${f(phc.total / pbc.total, 2)}×)`,
      );
    }
    console.log(
      `processes: p50_ratio=${f(ph.p50 / pb.p50, 2)} p99_ratio=${f(ph.p99 / pb.p99, 2)} throughput_ratio=${f(pht / pbt, 2)} (hookbus p50 ${f(ph.p50)} ms, baseline p50 ${f(pb.p50)} ms; coordinator + 3 workers as processes; ${processes.seconds.toFixed(0)} s)`,
    );
  }
  // Shell facts (issue 30 item 8): the typical command's cost and the slowest pathological one.
  console.log(factsLine(facts));
  // Streamed answers (issue 34 item 5): the edge's redaction against the unguarded stream.
  console.log(streamLine);
  console.log(
    formatBenchLine({
      p50_ratio: h.p50 / b.p50,
      p99_ratio: h.p99 / b.p99,
      throughput_ratio: ht / bt,
      cpu_ratio: hc.cpuUs / bc.cpuUs,
      alloc_ratio: hc.bytes / bc.bytes,
      fastpath_us: fast.usPerCall,
      replay_rps: replayRps,
      sign_cpu_pct: signed.medianPct,
      sign_work_pct: workPct,
      encrypt_cpu_pct: sealed.medianPct,
      aa_cpu_pct: features.aaPct,
      seal_work_pct: sealPct,
    }),
  );
}

await main();
