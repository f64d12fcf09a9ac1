/**
 * The coordinator process role: any number run side by side in one queue group. Each watches
 * the registry, answers calls through CallHandler, and records late verdicts.
 */
import type { Registry } from "prom-client";
import { nuid, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Bus, type BusOptions } from "../bus/bus.js";
import { ensureLogStreams, type LogSettings } from "../bus/streams.js";
import { beforeDeadline } from "../foundation/deadline.js";
import { isHookbusError } from "../foundation/errors.js";
import { AgentRateLimiter, resolveLimits, type Limits } from "../foundation/limits.js";
import type { LateVerdictRecord } from "../log/record.js";
import { redactionKeyFromEnv, redactRecord } from "../log/redaction.js";
import { mergeOutcomes } from "../merge/merge.js";
import { RegistryStore } from "../registry/store.js";
import { RegistrySnapshot } from "../registry/snapshot.js";
import { CoordinatorTelemetry } from "./telemetry.js";
import { ApprovalStore } from "../approvals/store.js";
import { ApprovalService } from "./approval-service.js";
import { CallHandler } from "./call-handler.js";
import { scopedMessageId } from "../log/message-id.js";
import { JoinedCalls } from "./joined-calls.js";
import { LateContexts } from "./late-contexts.js";
import { refuseOverloaded } from "./overload.js";
import { LogWriter } from "./log-writer.js";
import { ObservationHandler } from "./observation-handler.js";
import { PolicyAsker, type LateReply } from "./policy-asker.js";
import { boundedLateVerdict } from "../log/decision-record.js";
import type { HookEvent, ModifyingHookName } from "../catalog/catalog.js";

export interface CoordinatorOptions extends BusOptions {
  nc: NatsConnection;
  /** Settings of the log and blob streams, used when this coordinator creates them. */
  log?: LogSettings;
  /** A name for this process in records and logs; random by default. */
  id?: string;
  /** How long after a policy's deadline its reply is still recorded as a late verdict. */
  lateWindowMs?: number;
  /**
   * Calls handled at once; beyond it a call is answered HOOKBUS_OVERLOADED at once (unrecorded),
   * and the agent SDK re-sends it, so the queue group spreads it to a coordinator with room.
   * Default 1024.
   */
  maxInFlight?: number;
  /**
   * Key of keyed hashes of redaction rules (`action: "hash"`): HMAC-SHA256 instead of plain
   * sha256. Default: HOOKBUS_REDACTION_KEY. Agents that observe must use the same key.
   */
  redactionKey?: string;
  /** Limits on calls and observations (docs/limits.md); unset ones come from HOOKBUS_MAX_* env, then defaults. */
  limits?: Partial<Limits>;
  logger?: Logger;
  /** How often to check that every declared policy has a live worker (ms; 0: never). Default 15 s. */
  livenessIntervalMs?: number;
  /** How often to settle expired approval requests nobody asked about (ms; 0: never). Default 2 s. */
  approvalSweepMs?: number;
}

export interface Coordinator {
  readonly id: string;
  /** The registry revision in force. */
  registry(): RegistrySnapshot;
  /** This coordinator's Prometheus metrics (serve them with serveHttp). */
  /** Prometheus metrics (prom-client), e.g. for your own `/metrics` endpoint. */
  readonly metrics: Registry;
  /** Connected to NATS with the registry loaded, and not stopping (for /readyz). */
  ready(): { ready: boolean; reasons: string[] };
  /** Stop taking calls, finish the ones in flight (each answered after its record is stored), release resources. */
  stop(): Promise<void>;
}

/** Calls handled at once by one coordinator beyond which new ones get HOOKBUS_OVERLOADED. */
export const DEFAULT_MAX_IN_FLIGHT = 1024;

export async function startCoordinator(options: CoordinatorOptions): Promise<Coordinator> {
  const limits = resolveLimits(options.limits);
  const bus = await Bus.open(options.nc, {
    ...options,
    codec: { ...options.codec, limits: { ...limits, ...options.codec?.limits } },
  });
  const rateLimiter = new AgentRateLimiter(limits);
  const id = options.id ?? `coordinator-${nuid.next().slice(-8)}`;
  const logger = bus.logger.child({ coordinator: id });
  await ensureLogStreams(bus.jsm, bus.subjects, options.log, logger);

  let snapshot = RegistrySnapshot.empty();
  const registry = await RegistryStore.open(options.nc, bus.subjects);
  // Every JetStream set-up call comes before the first subscription (the registry watch), so a
  // start that fails on a JetStream that does not answer yet leaves nothing behind to retry over.
  const approvalStore = await ApprovalStore.open(options.nc, bus.subjects);
  const stopWatching = await registry.watch((next) => {
    snapshot = next;
    logger.info(
      { revision: next.revision, policies: next.document.policies.length },
      "registry revision in force",
    );
  }, logger);

  // No chain work here: the sealer seals the log after the fact (src/sealer/).
  const writer = new LogWriter(bus);
  const redactionKey = options.redactionKey ?? redactionKeyFromEnv();
  // Calls whose policies may still answer late: what a late record needs to say "would have blocked".
  const lateWindowMs = options.lateWindowMs ?? 60_000;
  const lateContext = new LateContexts(lateWindowMs);
  const asker = new PolicyAsker(bus, {
    lateWindowMs,
    onLate: (late) => void recordLate(late),
  });

  async function recordLate({ request, outcome }: LateReply): Promise<void> {
    telemetry.lateVerdict(outcome.policy);
    const call = lateContext.get(request.callKey);
    if (call === undefined) {
      logger.warn(
        { callId: request.callId, policy: outcome.policy },
        "late verdict after its call was forgotten; not recorded",
      );
      return;
    }
    const hook: ModifyingHookName = request.hook;
    let wouldHaveBlocked = false;
    try {
      // An empty event: blocking never depends on it (the event only shapes lists and texts).
      const alone = mergeOutcomes(hook, {} as HookEvent<typeof hook>, [
        { ...outcome, mode: "enforce", failMode: "fail-open" },
      ]);
      wouldHaveBlocked = alone.decision.outcome === "block";
    } catch {
      wouldHaveBlocked = false;
    }
    const record: LateVerdictRecord = {
      v: 1,
      kind: "late",
      callId: request.callId,
      hook,
      context: call.context,
      policy: outcome.policy,
      ...(outcome.version === undefined ? {} : { version: outcome.version }),
      ...boundedLateVerdict(hook, outcome.verdict),
      ...(outcome.error === undefined ? {} : { error: outcome.error }),
      latencyMs: Math.round((outcome.latencyMs ?? 0) * 1000) / 1000,
      timeoutMs: request.timeoutMs,
      wouldHaveBlocked,
      receivedAt: new Date().toISOString(),
      coordinator: id,
    };
    const subject = bus.subjects.audit(
      String(call.context.agentId),
      String(call.context.sessionKey),
      hook,
      "late",
    );
    const logged = redactRecord(record, call.snapshot.document.redact, { key: redactionKey });
    await writer
      .append(
        subject,
        logged,
        // Scoped like the decision's id: agents may share callIds.
        `${scopedMessageId("late", String(call.context.agentId), String(call.context.sessionKey), request.callId)}.${outcome.policy}`,
        Date.now() + 10_000,
      )
      .catch((error: unknown) =>
        logger.error({ err: error, callId: request.callId }, "could not record a late verdict"),
      );
  }

  const approvals = new ApprovalService({
    nc: options.nc,
    bus,
    store: approvalStore,
    writer,
    coordinatorId: id,
    logger,
    redact: () => snapshot.document.redact ?? [],
    redactionKey,
    ...(options.approvalSweepMs === undefined ? {} : { sweepIntervalMs: options.approvalSweepMs }),
  });
  approvals.start();

  const inFlight = new Set<Promise<void>>();
  const telemetry = new CoordinatorTelemetry({
    bus,
    id,
    inFlight: () => inFlight.size,
    registry: () => snapshot,
    ...(options.livenessIntervalMs === undefined
      ? {}
      : { livenessIntervalMs: options.livenessIntervalMs }),
  });
  const handler = new CallHandler({
    bus,
    asker,
    writer,
    registry: () => snapshot,
    coordinatorId: id,
    redactionKey,
    telemetry,
    limits,
    rateLimiter,
    approvals,
    onCallStarted: (callId, context, _event, called) =>
      lateContext.started(callId, { context, snapshot: called }),
    onCallFinished: (callId) => lateContext.finished(callId),
  });
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const joined = new JoinedCalls();

  const subscription: Subscription = options.nc.subscribe(bus.subjects.callWildcard, {
    queue: bus.subjects.coordinatorQueue,
    callback: (error, msg) => {
      if (error !== null) {
        logger.error({ err: error }, "call subscription error");
        return;
      }
      // A re-sent call joins its run in flight, which costs nothing: checked before the cap.
      const admitted = joined.admit(msg);
      if (admitted === undefined) return;
      if (inFlight.size >= maxInFlight) {
        admitted.done();
        void refuseOverloaded(bus, msg, maxInFlight).catch((e: unknown) =>
          logger.warn({ err: e }, "could not refuse a call"),
        );
        return;
      }
      const work = telemetry
        .traceCall(admitted.msg, () => handler.handle(admitted.msg))
        .catch((e: unknown) => {
          if (!isHookbusError(e)) logger.error({ err: e }, "unhandled call failure");
        });
      inFlight.add(work);
      void work.finally(() => {
        admitted.done();
        inFlight.delete(work);
      });
    },
  });
  telemetry.start();
  // Observations: agents never write the log themselves (docs/protocol.md, "Observations").
  const observations = new ObservationHandler({
    bus,
    writer,
    registry: () => snapshot,
    coordinatorId: id,
    limits,
    rateLimiter,
    redactionKey,
  });
  const observeSubscription: Subscription = options.nc.subscribe(bus.subjects.observeWildcard, {
    queue: bus.subjects.coordinatorQueue,
    callback: (error, msg) => {
      if (error !== null) {
        logger.error({ err: error }, "observe subscription error");
        return;
      }
      // Observations count against the same cap as calls: memory stays bounded either way.
      if (inFlight.size >= maxInFlight) {
        void refuseOverloaded(bus, msg, maxInFlight).catch((e: unknown) =>
          logger.warn({ err: e }, "could not refuse an observation"),
        );
        return;
      }
      const work = observations.handle(msg).catch((e: unknown) => {
        logger.error({ err: e }, "unhandled observation failure");
      });
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },
  });
  // "Ready" means the server routes to us: a flush returns once it has processed every
  // subscription above (calls, observations, approval answers, verdict inbox). Bounded: on a
  // connection that is down the subscriptions are re-sent on reconnect anyway.
  await beforeDeadline(
    options.nc.flush(),
    Date.now() + READY_FLUSH_MS,
    "HOOKBUS_COORDINATOR_UNAVAILABLE",
    () => `the server did not confirm the coordinator's subscriptions within ${READY_FLUSH_MS} ms`,
  ).catch((error: unknown) => logger.warn({ err: error }, "starting without the confirmation"));
  logger.info({ subject: bus.subjects.callWildcard }, "coordinator ready");

  let stopping: Promise<void> | undefined;
  return {
    id,
    registry: () => snapshot,
    metrics: telemetry.metrics,
    ready: () => telemetry.ready(),
    stop() {
      stopping ??= (async () => {
        await telemetry.stop();
        await subscription.drain().catch(() => {});
        await observeSubscription.drain().catch(() => {});
        await Promise.allSettled([...inFlight]);
        await approvals.stop();
        await asker.close();
        await stopWatching();
        lateContext.clear();
        logger.info("coordinator stopped");
      })();
      return stopping;
    },
  };
}

/** How long start waits for the server to confirm the coordinator's subscriptions. */
const READY_FLUSH_MS = 10_000;
