/**
 * Prometheus metrics of one coordinator or worker (the sealer's: sealer-metrics.ts), each in its own prom-client Registry so that
 * several instances in one process (tests, an embedding application) never share or clash. Every
 * label takes values from a bounded set: hook names, outcomes, statuses, registered policies.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from "prom-client";
import { BoundCounter, BoundHistogram } from "./bound-metrics.js";

/** Seconds; from a fast in-process policy (sub-millisecond) to a call near its 5 s default deadline. */
const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

export function newRegistry(role: "coordinator" | "worker" | "sealer", id: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ role, instance_id: id });
  collectDefaultMetrics({ register: registry, prefix: "hookbus_" });
  return registry;
}

export class CoordinatorMetrics {
  // Updated on every call: series bound once (bound-metrics.ts).
  readonly calls: BoundHistogram<"hook" | "outcome">;
  readonly policyLatency: BoundHistogram<"policy" | "hook" | "status">;
  readonly policyStatus: BoundCounter<"policy" | "hook" | "status">;
  readonly logAppend: BoundHistogram<"result">;
  readonly lateVerdicts: Counter<"policy">;
  readonly liveWorkers: Gauge<"policy">;

  constructor(
    readonly registry: Registry,
    inFlight: () => number,
  ) {
    const registers = [registry];
    this.calls = new BoundHistogram({
      name: "hookbus_call_duration_seconds",
      help: "Agent calls from receipt to answer, by hook and outcome (allow, modify, block, reply, error).",
      labelNames: ["hook", "outcome"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.policyLatency = new BoundHistogram({
      name: "hookbus_policy_duration_seconds",
      help: "Asking one policy, from request to verdict (or timeout), by policy, hook and status.",
      labelNames: ["policy", "hook", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.policyStatus = new BoundCounter({
      name: "hookbus_policy_outcomes_total",
      help: "Policy answers by status: ok, error, timeout, invalid, unavailable.",
      labelNames: ["policy", "hook", "status"],
      registers,
    });
    new Gauge({
      name: "hookbus_calls_in_flight",
      help: "Calls received and not yet answered.",
      registers,
      collect() {
        this.set(inFlight());
      },
    });
    this.logAppend = new BoundHistogram({
      name: "hookbus_log_append_duration_seconds",
      help: "Storing one record in the log (chain link, publish, acknowledgement), by result.",
      labelNames: ["result"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.lateVerdicts = new Counter({
      name: "hookbus_late_verdicts_total",
      help: "Verdicts that arrived after their deadline (recorded as late verdicts).",
      labelNames: ["policy"],
      registers,
    });
    this.liveWorkers = new Gauge({
      name: "hookbus_policy_live_workers",
      help: "Workers that answered the last discovery check, per declared policy (0: none alive).",
      labelNames: ["policy"],
      registers,
    });
  }
}

export class WorkerMetrics {
  readonly handler: BoundHistogram<"policy" | "hook" | "status">;

  constructor(
    readonly registry: Registry,
    inFlight: () => number,
  ) {
    const registers = [registry];
    this.handler = new BoundHistogram({
      name: "hookbus_worker_handler_duration_seconds",
      help: "A policy handler answering one request, by policy, hook and status (ok, error, invalid).",
      labelNames: ["policy", "hook", "status"],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    new Gauge({
      name: "hookbus_worker_in_flight",
      help: "Handlers (requests and observations) running in this worker.",
      registers,
      collect() {
        this.set(inFlight());
      },
    });
  }
}
