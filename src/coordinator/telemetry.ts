/**
 * Everything a coordinator tells the outside about itself: Prometheus metrics, spans, its
 * discovery description, the watch over its policies' workers, and readiness. The coordinator and
 * its call handler call in here at a few points (one line each), so the decision code stays about
 * decisions.
 */
import type { StopListState } from "../registry/stops.js";
import type { Msg } from "@nats-io/transport-node";
import { trace } from "@opentelemetry/api";
import type { Registry } from "prom-client";
import type { Bus } from "../bus/bus.js";
import type { RegistrySnapshot } from "../registry/snapshot.js";
import { followConnection, type ConnectionState } from "../observability/connection-state.js";
import type {
  CedarSetState,
  CoordinatorDescription,
  LogLag,
} from "../observability/discovery-schema.js";
import {
  processIdentity,
  serveDiscovery,
  type DiscoveryResponder,
} from "../observability/discovery.js";
import { WorkerLivenessCheck } from "./liveness-check.js";
import { CoordinatorMetrics, newRegistry } from "../observability/metrics.js";
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
import { beforeDeadline } from "../foundation/deadline.js";

/** What the call handler reports; absent, nothing is measured. */
export interface CallTelemetry {
  /** Ask one policy inside a span, and count its status and latency. */
  askPolicy<T extends { status: string }>(
    policy: string,
    hook: string,
    ask: () => Promise<T>,
  ): Promise<T>;
  /** Store one record inside a span, and time it. */
  appendLog<T extends { seq: number }>(append: () => Promise<T>): Promise<T>;
  /** The call was answered: with a decision's outcome, or "error". */
  answered(hook: string | undefined, outcome: string, receivedAt: Date): void;
}

export interface CoordinatorTelemetryOptions {
  bus: Bus;
  id: string;
  inFlight: () => number;
  registry: () => RegistrySnapshot;
  /** The public key the coordinator signs its records with, for discovery (absent: unsigned). */
  signingKey?: string;
  /** The Cedar sets of the revision in force as held here, for `hookbus status` (docs/protocol.md). */
  cedarSets?: () => CedarSetState[];
  /** The emergency stop list in force: its revision is reported for `hookbus stop`'s confirmation. */
  stops?: () => StopListState;
  /** How often the coordinator checks that declared policies have live workers (ms; 0: never). */
  livenessIntervalMs?: number;
}

interface Observer {
  observe(seconds: number): void;
}

/** How long a discovery reply may wait for the log stream's last sequence. */
const STREAM_INFO_TIMEOUT_MS = 1000;

export class CoordinatorTelemetry implements CallTelemetry {
  readonly metrics: Registry;
  private readonly m: CoordinatorMetrics;
  // Children per label set: these are observed several times per call (metric-children.ts).
  private readonly calls: MetricChildren<Observer>;
  private readonly policyLatency: MetricChildren<Observer>;
  private readonly policyStatus: MetricChildren<{ inc(): void }>;
  private readonly logAppend: MetricChildren<Observer>;
  private readonly recent = new RecentWindow();
  private readonly identity;
  private readonly connection: ConnectionState;
  private readonly liveness: WorkerLivenessCheck | undefined;
  private responder: DiscoveryResponder | undefined;
  private callsHandled = 0;
  private lastWrittenSeq: number | undefined;
  private stopped = false;

  constructor(private readonly options: CoordinatorTelemetryOptions) {
    const { bus, id } = options;
    this.metrics = newRegistry("coordinator", id);
    const m = (this.m = new CoordinatorMetrics(this.metrics, options.inFlight));
    this.calls = new MetricChildren((hook, outcome) => m.calls.series({ hook, outcome }));
    this.policyLatency = new MetricChildren((policy, hook, status) =>
      m.policyLatency.series({ policy, hook, status }),
    );
    this.policyStatus = new MetricChildren((policy, hook, status) =>
      m.policyStatus.series({ policy, hook, status }),
    );
    this.logAppend = new MetricChildren((result) => m.logAppend.series({ result }));
    this.identity = processIdentity(bus.subjects.namespace);
    this.connection = followConnection(bus.nc);
    const intervalMs = options.livenessIntervalMs;
    this.liveness =
      intervalMs === 0
        ? undefined
        : new WorkerLivenessCheck({
            nc: bus.nc,
            namespace: bus.subjects.namespace,
            registry: options.registry,
            logger: bus.logger,
            ...(intervalMs === undefined ? {} : { intervalMs }),
            onCount: (policy, workers) => this.m.liveWorkers.set({ policy }, workers),
          });
  }

  /** Start answering discovery and watching workers (once the coordinator takes calls). */
  start(): void {
    const { bus } = this.options;
    this.responder = serveDiscovery(
      bus.nc,
      bus.subjects.namespace,
      "coordinator",
      () => this.describe(),
      bus.logger,
    );
    this.liveness?.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.responder?.stop();
    await this.liveness?.stop();
  }

  /** Ready: connected to NATS, registry loaded (the coordinator exists), not stopping. */
  ready(): { ready: boolean; reasons: string[] } {
    const reasons: string[] = [];
    if (!this.connection.connected()) reasons.push("not connected to NATS");
    if (this.stopped) reasons.push("stopping");
    const stops = this.options.stops?.();
    // Still answering, but every call with a block (fail closed): an operator must look.
    if (stops !== undefined && !stops.readable)
      reasons.push(`emergency stop list unreadable, blocking every call: ${stops.why}`);
    return { ready: reasons.length === 0, reasons };
  }

  /**
   * Handle one agent call inside a span continuing the agent's trace. The span, its name, its
   * attributes and the parent read from the headers are built only when something traces: this
   * and the methods below run several times per call.
   */
  traceCall(msg: Msg, handle: () => Promise<void>): Promise<void> {
    if (untraced()) return handle();
    const hook = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
    return inSpan(
      `hookbus.coordinate ${hook}`,
      {
        kind: SpanKind.SERVER,
        parent: traceContextOf(msg.headers),
        attributes: { "hookbus.hook": hook, "hookbus.coordinator": this.options.id },
      },
      handle,
    );
  }

  askPolicy<T extends { status: string }>(
    policy: string,
    hook: string,
    ask: () => Promise<T>,
  ): Promise<T> {
    const started = performance.now();
    if (untraced()) return ask().then((outcome) => this.asked(policy, hook, started, outcome));
    return inSpan(
      `hookbus.policy.ask ${policy}`,
      { kind: SpanKind.CLIENT, attributes: { "hookbus.policy": policy, "hookbus.hook": hook } },
      async (span) => {
        const outcome = this.asked(policy, hook, started, await ask());
        span.setAttribute("hookbus.status", outcome.status);
        if (outcome.status !== "ok") markSpanError(span, outcome.status);
        return outcome;
      },
    );
  }

  private asked<T extends { status: string }>(
    policy: string,
    hook: string,
    started: number,
    outcome: T,
  ): T {
    this.policyLatency
      .of(policy, hook, outcome.status)
      .observe((performance.now() - started) / 1000);
    this.policyStatus.of(policy, hook, outcome.status).inc();
    return outcome;
  }

  appendLog<T extends { seq: number }>(append: () => Promise<T>): Promise<T> {
    const started = performance.now();
    if (untraced()) {
      return append().then(
        (appended) => this.appended(started, appended),
        (error: unknown) => {
          this.logAppend.of("error").observe((performance.now() - started) / 1000);
          throw error;
        },
      );
    }
    return inSpan("hookbus.log.append", { kind: SpanKind.PRODUCER }, async (span) => {
      let appended: T;
      try {
        appended = await append();
      } catch (error) {
        this.logAppend.of("error").observe((performance.now() - started) / 1000);
        throw error;
      }
      span.setAttribute("hookbus.log.seq", appended.seq);
      return this.appended(started, appended);
    });
  }

  private appended<T extends { seq: number }>(started: number, appended: T): T {
    this.lastWrittenSeq = Math.max(this.lastWrittenSeq ?? 0, appended.seq);
    this.logAppend.of("ok").observe((performance.now() - started) / 1000);
    return appended;
  }

  answered(hook: string | undefined, outcome: string, receivedAt: Date): void {
    const ms = Date.now() - receivedAt.getTime();
    this.callsHandled++;
    this.recent.add(ms, outcome !== "error");
    this.calls.of(hook ?? "unknown", outcome).observe(ms / 1000);
    if (!untraced()) trace.getActiveSpan()?.setAttribute("hookbus.outcome", outcome);
  }

  lateVerdict(policy: string): void {
    this.m.lateVerdicts.inc({ policy });
  }

  async describe(): Promise<CoordinatorDescription> {
    return {
      role: "coordinator",
      id: this.options.id,
      hookbus: HOOKBUS_VERSION,
      ...this.identity,
      inFlight: this.options.inFlight(),
      callsHandled: this.callsHandled,
      registryRevision: this.options.registry().revision,
      ...this.stopsRevision(),
      calls: this.recent.stats(),
      log: await this.logLag(),
      ...(this.options.signingKey === undefined ? {} : { signingKey: this.options.signingKey }),
      ...(this.options.cedarSets === undefined ? {} : { cedar: this.options.cedarSets() }),
    };
  }

  /** Reported only while readable: a coordinator blocking everything has not confirmed a change. */
  private stopsRevision(): { stopsRevision?: number } {
    const state = this.options.stops?.();
    return state?.readable === true ? { stopsRevision: state.list.revision } : {};
  }

  private async logLag(): Promise<LogLag> {
    const { bus } = this.options;
    try {
      const info = await beforeDeadline(
        bus.jsm.streams.info(bus.subjects.logStream),
        Date.now() + STREAM_INFO_TIMEOUT_MS,
        "HOOKBUS_LOG_UNAVAILABLE",
        () => `no log stream info within ${STREAM_INFO_TIMEOUT_MS} ms`,
      );
      const streamLastSeq = info.state.last_seq;
      const written = this.lastWrittenSeq;
      return written === undefined
        ? { streamLastSeq }
        : { streamLastSeq, lastWrittenSeq: written, lag: Math.max(0, streamLastSeq - written) };
    } catch (error) {
      return {
        omitted: `log stream info unavailable: ${String((error as Error)?.message ?? error)}`.slice(
          0,
          512,
        ),
      };
    }
  }
}

const UNMEASURED: CallTelemetry = {
  askPolicy: (_policy, _hook, ask) => ask(),
  appendLog: (append) => append(),
  answered: () => {},
};

/** The call's telemetry, or one that measures nothing (a CallHandler built without one). */
export function traced(telemetry: CallTelemetry | undefined): CallTelemetry {
  return telemetry ?? UNMEASURED;
}
