/**
 * Everything a policy worker tells the outside about itself: per-hook handler latency and
 * statuses (Prometheus and a recent window for discovery), the handler's span continuing the
 * coordinator's trace, its discovery description, and readiness.
 */
import { nuid, type Msg } from "@nats-io/transport-node";
import type { Registry } from "prom-client";
import type { Bus } from "../bus/bus.js";
import { isModifyingHook } from "../catalog/catalog.js";
import type { Policy } from "../policy/policy.js";
import { followConnection, type ConnectionState } from "../observability/connection-state.js";
import {
  MAX_DESCRIBED_POLICIES,
  type WorkerDescription,
} from "../observability/discovery-schema.js";
import {
  processIdentity,
  serveDiscovery,
  type DiscoveryResponder,
} from "../observability/discovery.js";
import { newRegistry, WorkerMetrics } from "../observability/metrics.js";
import { RecentWindow } from "../observability/recent-window.js";
import { MetricChildren } from "../observability/metric-children.js";
import {
  inSpan,
  markSpanError,
  SpanKind,
  traceContextOf,
  untraced,
} from "../observability/trace.js";
import { HOOKBUS_VERSION } from "../observability/version.js";

export interface WorkerTelemetryOptions {
  bus: Bus;
  policies: readonly Policy[];
  inFlight: () => number;
  id?: string;
}

export class WorkerTelemetry {
  readonly id: string;
  readonly metrics: Registry;
  private readonly handler: MetricChildren<{ observe(seconds: number): void }>;
  /** One window per policy and modifying hook it handles: bounded by the policies served. */
  private readonly windows = new Map<string, RecentWindow>();
  private readonly identity;
  private readonly connection: ConnectionState;
  private responder: DiscoveryResponder | undefined;
  private stopped = false;

  constructor(private readonly options: WorkerTelemetryOptions) {
    this.id = options.id ?? `worker-${nuid.next().slice(-8)}`;
    this.metrics = newRegistry("worker", this.id);
    const metrics = new WorkerMetrics(this.metrics, options.inFlight);
    this.handler = new MetricChildren((policy, hook, status) =>
      metrics.handler.series({ policy, hook, status }),
    );
    this.identity = processIdentity(options.bus.subjects.namespace);
    this.connection = followConnection(options.bus.nc);
    for (const policy of options.policies) {
      for (const hook of policy.hookNames) {
        if (isModifyingHook(hook)) this.windows.set(`${policy.name} ${hook}`, new RecentWindow());
      }
    }
  }

  start(): void {
    const { bus } = this.options;
    this.responder = serveDiscovery(
      bus.nc,
      bus.subjects.namespace,
      "worker",
      () => this.describe(),
      bus.logger,
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.responder?.stop();
  }

  ready(): { ready: boolean; reasons: string[] } {
    const reasons: string[] = [];
    if (!this.connection.connected()) reasons.push("not connected to NATS");
    if (this.stopped) reasons.push("stopping");
    return { ready: reasons.length === 0, reasons };
  }

  /**
   * Run one request's handler inside a span continuing the coordinator's trace (no span when
   * nothing traces: this is on every request); `answer` resolves to the error code it replied
   * with (undefined: a verdict or no opinion).
   */
  handle(policy: string, msg: Msg, answer: () => Promise<string | undefined>): Promise<void> {
    const hook = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
    const started = performance.now();
    if (untraced()) {
      return answer().then((code) => {
        this.handled(policy, hook, started, code);
      });
    }
    return inSpan(
      `hookbus.policy.handle ${policy}`,
      {
        kind: SpanKind.SERVER,
        parent: traceContextOf(msg.headers),
        attributes: { "hookbus.policy": policy, "hookbus.hook": hook, "hookbus.worker": this.id },
      },
      async (span) => {
        const code = await answer();
        this.handled(policy, hook, started, code);
        if (code !== undefined) markSpanError(span, code);
      },
    );
  }

  private handled(policy: string, hook: string, started: number, code: string | undefined): void {
    const status =
      code === undefined ? "ok" : code === "HOOKBUS_INVALID_VERDICT" ? "invalid" : "error";
    const ms = performance.now() - started;
    // Only hooks the policy handles get a window: a request for another hook is not a new key.
    const window = this.windows.get(`${policy} ${hook}`);
    window?.add(ms, status === "ok");
    this.handler.of(policy, window === undefined ? "other" : hook, status).observe(ms / 1000);
  }

  describe(): WorkerDescription {
    return {
      role: "worker",
      id: this.id,
      hookbus: HOOKBUS_VERSION,
      ...this.identity,
      inFlight: this.options.inFlight(),
      policies: this.options.policies.slice(0, MAX_DESCRIBED_POLICIES).map((policy) => ({
        name: policy.name,
        ...(policy.version === undefined ? {} : { version: policy.version }),
        hooks: [...policy.hookNames],
        stats: Object.fromEntries(
          policy.hookNames
            .filter((hook) => isModifyingHook(hook))
            .map((hook) => [
              hook,
              this.windows.get(`${policy.name} ${hook}`)?.stats() ?? { count: 0, errorRate: 0 },
            ]),
        ),
      })),
    };
  }
}
