/**
 * `runPolicy`: serve one or more policies on NATS. Modifying hooks are answered over core
 * request/reply (queue group per policy), observational hooks are consumed from the log
 * (durable consumer per policy and hook). `stop()` drains: no new work is taken, every request
 * already received is answered and every observation being handled is acked, then it resolves.
 */
import type { Registry } from "prom-client";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Bus } from "../bus/bus.js";
import { moveOnLameDuck } from "../bus/lame-duck-move.js";
import { isModifyingHook } from "../catalog/catalog.js";
import { HookbusError } from "../foundation/errors.js";
import { WorkerTelemetry } from "./telemetry.js";
import { InFlight } from "./in-flight.js";
import { DEFAULT_OBSERVE_OPTIONS, Observer, type ObserveOptions } from "./observer.js";
import type { Policy } from "../policy/policy.js";
import { RequestServer } from "./request-server.js";
import { onShutdownSignals } from "./signals.js";
import { KvSessionStateStore, type KvSessionStateOptions } from "../policy/state/kv-store.js";
import type { SessionStateStore } from "../policy/state/session-state.js";
import { SealedSessionStateStore, StateKeyClient } from "../policy/state/sealed-store.js";

/** Handlers running at once per runner (requests and observations together). */
export const DEFAULT_CONCURRENCY = 64;

/** Requests waiting for a handler beyond which a worker answers HOOKBUS_WORKER_OVERLOADED. */
export const DEFAULT_MAX_QUEUED = 1024;

export interface RunPolicyOptions {
  nc: NatsConnection;
  /** Must match the coordinators' namespace. Default `hookbus`. */
  namespace?: string;
  /** Library code logs nothing unless given a logger. */
  logger?: Logger;
  /**
   * Where session state lives: `"kv"` (default) is the namespace's JetStream KV bucket, shared by
   * every worker and kept across restarts; or any `SessionStateStore` (e.g. a
   * `MemorySessionStateStore` for tests).
   */
  state?: "kv" | SessionStateStore;
  /** Settings of the KV state store (`state: "kv"`): TTL, compare-and-set retries. */
  stateOptions?: Omit<KvSessionStateOptions, "namespace" | "logger">;
  /**
   * Seal every state value under its session's state key, which coordinators running with
   * encryption on hand out (docs/privacy.md, "Session state"). Off by default: with it on, a
   * worker whose coordinators do not encrypt cannot read or write state. `keyCacheMs`: how long
   * a state key is reused before a coordinator is asked again (default 30 s; an erased session
   * is noticed by then).
   */
  sealState?: boolean | { keyCacheMs?: number };
  /**
   * On SIGTERM/SIGINT: stop() (finish in-flight work), then exit the process (code 0). A second
   * signal aborts the handlers' `tools.signal` and exits at once (code 1).
   */
  handleSignals?: boolean;
  /** Maximum handlers running at once in this runner. Default 64. */
  concurrency?: number;
  /**
   * Requests waiting for a free handler beyond which new ones are answered at once with
   * HOOKBUS_WORKER_OVERLOADED (the coordinator applies the policy's failure mode). Default 1024.
   */
  maxQueued?: number;
  /** Delivery settings of observational hooks. */
  observe?: ObserveOptions;
  /** This worker's name in discovery replies and metrics; random by default. */
  id?: string;
}

export interface PolicyRunner {
  readonly policies: readonly Policy[];
  /** This worker's name in discovery replies and metrics. */
  readonly id: string;
  /** This worker's Prometheus metrics (serve them with serveHttp). */
  /** Prometheus metrics (prom-client), e.g. for your own `/metrics` endpoint. */
  readonly metrics: Registry;
  /** Connected to NATS and serving, not stopping (for /readyz). */
  ready(): { ready: boolean; reasons: string[] };
  /** Stop taking work, wait for in-flight handlers to finish and answer, then resolve. Idempotent. */
  stop(): Promise<void>;
}

export async function runPolicy(
  policyOrPolicies: Policy | readonly Policy[],
  options: RunPolicyOptions,
): Promise<PolicyRunner> {
  const policies = checkPolicies(
    Array.isArray(policyOrPolicies) ? policyOrPolicies : [policyOrPolicies as Policy],
  );
  const bus = await Bus.open(options.nc, {
    ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });
  const state = openSessionState(options, bus);
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const inFlight = new InFlight(concurrency);
  const hardStop = new AbortController();
  const servers: RequestServer[] = [];
  const observers: Observer[] = [];
  const telemetry = new WorkerTelemetry({
    bus,
    policies,
    inFlight: () => inFlight.size,
    ...(options.id === undefined ? {} : { id: options.id }),
  });

  // A NATS node about to stop (lame-duck mode): hand new requests to the policy's other workers,
  // answer those in hand, move to another node, and take requests again there.
  const stopMoving = moveOnLameDuck(options.nc, lameDuckMove(bus, servers, inFlight));

  const shutdown = async () => {
    stopMoving();
    await telemetry.stop();
    await Promise.all(servers.map((server) => server.drain()));
    await Promise.all(observers.map((observer) => observer.stop()));
    await inFlight.idle();
    // The answers were handed to the client; make sure they reached the server.
    if (!options.nc.isClosed()) {
      await options.nc.flush().catch((error: unknown) => {
        // The connection went away meanwhile: the coordinators time out on what did not arrive.
        bus.logger.warn({ err: error }, "answers may not have reached NATS before the stop");
      });
    }
  };

  try {
    const serving = { bus, state, inFlight, hardStop: hardStop.signal };
    servers.push(...serveRequests(policies, serving, options.maxQueued, telemetry));
    telemetry.start();
    // Subscriptions are registered at the server before runPolicy resolves.
    await options.nc.flush();
    const settings = { ...DEFAULT_OBSERVE_OPTIONS, ...options.observe };
    await startObservers(
      policies,
      { ...serving, batch: Math.min(concurrency, 256), settings },
      observers,
    );
  } catch (error) {
    await shutdown();
    throw error;
  }

  bus.logger.info(
    { policies: policies.map((p) => ({ name: p.name, version: p.version, hooks: p.hookNames })) },
    "policy worker serving",
  );

  let stopping: Promise<void> | undefined;
  let removeSignalHandlers = () => {};
  const runner: PolicyRunner = {
    policies,
    id: telemetry.id,
    metrics: telemetry.metrics,
    ready: () => telemetry.ready(),
    stop() {
      stopping ??= shutdown().finally(() => {
        removeSignalHandlers();
        bus.logger.info({ policies: policies.map((p) => p.name) }, "policy worker stopped");
      });
      return stopping;
    },
  };
  if (options.handleSignals === true) {
    removeSignalHandlers = onShutdownSignals({
      logger: bus.logger,
      graceful: () => runner.stop(),
      abort: () => hardStop.abort(new Error("worker forced to stop")),
    });
  }
  return runner;
}

/** The session-state store named by `options.state`: the namespace's KV bucket by default. */
function openSessionState(options: RunPolicyOptions, bus: Bus): SessionStateStore {
  if (
    options.state !== undefined &&
    options.state !== "kv" &&
    (typeof options.state !== "object" || typeof options.state.update !== "function")
  ) {
    throw new TypeError(`state must be "kv" or a SessionStateStore, got ${typeof options.state}`);
  }
  const store =
    options.state === undefined || options.state === "kv"
      ? new KvSessionStateStore(options.nc, {
          ...options.stateOptions,
          namespace: bus.subjects.namespace,
          logger: bus.logger,
        })
      : options.state;
  const seal = options.sealState;
  if (seal === undefined || seal === false) return store;
  const cacheMs = seal === true ? undefined : seal.keyCacheMs;
  return new SealedSessionStateStore(store, new StateKeyClient(options.nc, bus.subjects, cacheMs));
}

/** Pause and resume for moveOnLameDuck: stop taking requests and finish those in hand. */
function lameDuckMove(bus: Bus, servers: readonly RequestServer[], inFlight: InFlight) {
  return {
    logger: bus.logger,
    pause: async () => {
      await Promise.all(servers.map((server) => server.pause()));
      await inFlight.idle();
    },
    resume: () => {
      for (const server of servers) server.resume();
    },
  };
}

/** What every request server and observer of one runner shares. */
interface Serving {
  bus: Bus;
  state: SessionStateStore;
  inFlight: InFlight;
  hardStop: AbortSignal;
}

/** One request server (core request/reply, queue group) per policy for its modifying hooks. */
function serveRequests(
  policies: readonly Policy[],
  serving: Serving,
  maxQueued: number | undefined,
  telemetry: WorkerTelemetry,
): RequestServer[] {
  return policies.map(
    (policy) =>
      new RequestServer({
        ...serving,
        policy,
        maxQueued: maxQueued ?? DEFAULT_MAX_QUEUED,
        telemetry,
      }),
  );
}

/**
 * One durable consumer per policy and observational hook. Each observer is pushed before it
 * starts so that a failed start still stops the ones already running.
 */
async function startObservers(
  policies: readonly Policy[],
  serving: Serving & { batch: number; settings: Required<ObserveOptions> },
  observers: Observer[],
): Promise<void> {
  for (const policy of policies) {
    for (const hook of policy.hookNames) {
      if (isModifyingHook(hook)) continue;
      const observer = new Observer({ ...serving, policy, hook });
      observers.push(observer);
      await observer.start();
    }
  }
}

function checkPolicies(policies: readonly Policy[]): readonly Policy[] {
  if (policies.length === 0) {
    throw new HookbusError("HOOKBUS_INVALID_POLICY", "runPolicy needs at least one policy", {});
  }
  const seen = new Set<string>();
  for (const policy of policies) {
    // Plain objects that did not go through definePolicy lack the checked hook list.
    if (typeof policy !== "object" || policy === null || !Array.isArray(policy.hookNames)) {
      throw new HookbusError(
        "HOOKBUS_INVALID_POLICY",
        "runPolicy takes policies made with definePolicy()",
        {},
      );
    }
    if (seen.has(policy.name)) {
      throw new HookbusError("HOOKBUS_INVALID_POLICY", `policy "${policy.name}" is given twice`, {
        policy: policy.name,
      });
    }
    seen.add(policy.name);
  }
  return Object.freeze([...policies]);
}
