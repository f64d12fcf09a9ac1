/**
 * `npm run bench:metrics`: the Node CPU one decision spends in Prometheus metrics, in the pattern
 * of `npm run bench`'s call (3 policies on before_tool_call): in the coordinator, per policy a
 * latency observation and an outcome count, then the log append's and the call's latency; in each
 * of the 3 workers, the handler's latency. 11 updates per call, through the real metric classes
 * (src/observability/metrics.ts) and children cache (metric-children.ts), against prom-client's
 * own children held by the caller (what the metrics cost before bound-metrics.ts) and the floor
 * (a bucket search and three additions, nothing else).
 */
import { Registry } from "prom-client";
import { CoordinatorMetrics, WorkerMetrics } from "../src/observability/metrics.js";
import { MetricChildren } from "../src/observability/metric-children.js";

const CALLS = Number(process.env.BENCH_METRIC_CALLS ?? 200_000);
const POLICIES = ["p1", "p2", "p3"];
const HOOK = "before_tool_call";

function cpuNsPerCall(call: (i: number) => void): number {
  for (let i = 0; i < 20_000; i++) call(i);
  const before = process.cpuUsage();
  for (let i = 0; i < CALLS; i++) call(i);
  const cpu = process.cpuUsage(before);
  return ((cpu.user + cpu.system) * 1000) / CALLS;
}

/** Today's path: the children cache over bound series, as the telemetry classes use them. */
function throughChildren(): (i: number) => void {
  const c = new CoordinatorMetrics(new Registry(), () => 0);
  const w = new WorkerMetrics(new Registry(), () => 0);
  const latency = new MetricChildren((p, h, s) =>
    c.policyLatency.series({ policy: p, hook: h, status: s }),
  );
  const status = new MetricChildren((p, h, s) =>
    c.policyStatus.series({ policy: p, hook: h, status: s }),
  );
  const append = new MetricChildren((r) => c.logAppend.series({ result: r }));
  const calls = new MetricChildren((h, o) => c.calls.series({ hook: h, outcome: o }));
  const handler = new MetricChildren((p, h, s) =>
    w.handler.series({ policy: p, hook: h, status: s }),
  );
  return (i) => {
    const seconds = 0.0002 + (i % 7) * 0.0001;
    for (const p of POLICIES) {
      handler.of(p, HOOK, "ok").observe(seconds);
      latency.of(p, HOOK, "ok").observe(seconds);
      status.of(p, HOOK, "ok").inc();
    }
    append.of("ok").observe(seconds);
    calls.of(HOOK, "allow").observe(seconds);
  };
}

/** prom-client's children held by the caller: no cache lookup, prom-client's own work only. */
function heldChildren(): (i: number) => void {
  const c = new CoordinatorMetrics(new Registry(), () => 0);
  const w = new WorkerMetrics(new Registry(), () => 0);
  const labels = (policy: string) => ({ policy, hook: HOOK, status: "ok" });
  const perPolicy = POLICIES.map((p) => ({
    handler: w.handler.labels(labels(p)),
    latency: c.policyLatency.labels(labels(p)),
    status: c.policyStatus.labels(labels(p)),
  }));
  const append = c.logAppend.labels({ result: "ok" });
  const calls = c.calls.labels({ hook: HOOK, outcome: "allow" });
  return (i) => {
    const seconds = 0.0002 + (i % 7) * 0.0001;
    for (const p of perPolicy) {
      p.handler.observe(seconds);
      p.latency.observe(seconds);
      p.status.inc();
    }
    append.observe(seconds);
    calls.observe(seconds);
  };
}

/** A series' storage bound once: what a pre-bound child's update costs at the least. */
class BoundSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }
  observe(value: number): void {
    let b = 0;
    while (b < this.bounds.length && value > this.bounds[b]!) b++;
    this.counts[b]!++;
    this.sum += value;
    this.count++;
  }
}

function bound(): (i: number) => void {
  const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const series = Array.from({ length: 11 }, () => new BoundSeries(buckets));
  return (i) => {
    const seconds = 0.0002 + (i % 7) * 0.0001;
    for (const s of series) s.observe(seconds);
  };
}

const sides = { children: throughChildren(), held: heldChildren(), bound: bound() };
const ns = { children: [] as number[], held: [] as number[], bound: [] as number[] };
for (let round = 0; round < 3; round++) {
  for (const side of ["children", "held", "bound"] as const)
    ns[side].push(cpuNsPerCall(sides[side]));
}
const show = (xs: number[]) => xs.map((x) => (x / 1000).toFixed(2)).join(" / ");
console.log(`metric updates per call (11), µs of Node CPU, 3 rounds of ${CALLS} calls:`);
console.log(`  children cache over bound series (today): ${show(ns.children)}`);
console.log(`  prom-client children held by the caller:   ${show(ns.held)}`);
console.log(`  series bound once (the floor):            ${show(ns.bound)}`);
