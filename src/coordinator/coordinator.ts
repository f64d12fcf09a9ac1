/**
 * The coordinator process role: any number run side by side in one queue group. Each watches
 * the registry, answers calls through CallHandler, and records late verdicts.
 */
import { nuid, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { Bus, type BusOptions } from "../bus/bus.js";
import { ensureLogStreams, type LogSettings } from "../bus/streams.js";
import { isHookbusError } from "../errors.js";
import type { LateVerdictRecord } from "../log/record.js";
import { redactionKeyFromEnv, redactRecord } from "../log/redaction.js";
import { mergeOutcomes } from "../merge/merge.js";
import { RegistryStore } from "../registry/store.js";
import { RegistrySnapshot } from "../registry/snapshot.js";
import { CallHandler } from "./call-handler.js";
import { LogWriter } from "./log-writer.js";
import { PolicyAsker, type LateReply } from "./policy-asker.js";
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
   * Key of keyed hashes of redaction rules (`action: "hash"`): HMAC-SHA256 instead of plain
   * sha256. Default: HOOKBUS_REDACTION_KEY. Agents that observe must use the same key.
   */
  redactionKey?: string;
  logger?: Logger;
}

export interface Coordinator {
  readonly id: string;
  /** The registry revision in force. */
  registry(): RegistrySnapshot;
  /** Stop taking calls, finish the ones in flight (each answered after its record is stored), release resources. */
  stop(): Promise<void>;
}

interface PendingLate {
  event: unknown;
  context: Record<string, unknown>;
  /** The registry revision the call was decided with: its redaction rules apply. */
  snapshot: RegistrySnapshot;
}

export async function startCoordinator(options: CoordinatorOptions): Promise<Coordinator> {
  const bus = await Bus.open(options.nc, options);
  const id = options.id ?? `coordinator-${nuid.next().slice(-8)}`;
  const logger = bus.logger.child({ coordinator: id });
  await ensureLogStreams(bus.jsm, bus.subjects, options.log, logger);

  let snapshot = RegistrySnapshot.empty();
  const registry = await RegistryStore.open(options.nc, bus.subjects);
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
  const lateContext = new Map<string, PendingLate>();
  const asker = new PolicyAsker(bus, {
    ...(options.lateWindowMs === undefined ? {} : { lateWindowMs: options.lateWindowMs }),
    onLate: (late) => void recordLate(late),
  });

  async function recordLate({ request, outcome }: LateReply): Promise<void> {
    const call = lateContext.get(request.callId);
    if (call === undefined) return;
    const hook: ModifyingHookName = request.hook;
    let wouldHaveBlocked = false;
    try {
      const alone = mergeOutcomes(hook, call.event as HookEvent<typeof hook>, [
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
      ...(outcome.verdict === undefined ? {} : { verdict: outcome.verdict }),
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
      .append(subject, logged, `late.${request.callId}.${outcome.policy}`, Date.now() + 10_000)
      .catch((error: unknown) =>
        logger.error({ err: error, callId: request.callId }, "could not record a late verdict"),
      );
  }

  const handler = new CallHandler({
    bus,
    asker,
    writer,
    registry: () => snapshot,
    coordinatorId: id,
    redactionKey,
    onCallStarted: (callId, context, event, called) =>
      lateContext.set(callId, { context, event, snapshot: called }),
    onCallFinished: (callId) => {
      // Keep the call's input only as long as a late verdict may still arrive.
      setTimeout(() => lateContext.delete(callId), options.lateWindowMs ?? 60_000).unref();
    },
  });

  const inFlight = new Set<Promise<void>>();
  const subscription: Subscription = options.nc.subscribe(bus.subjects.callWildcard, {
    queue: bus.subjects.coordinatorQueue,
    callback: (error, msg) => {
      if (error !== null) {
        logger.error({ err: error }, "call subscription error");
        return;
      }
      const work = handler.handle(msg).catch((e: unknown) => {
        if (!isHookbusError(e)) logger.error({ err: e }, "unhandled call failure");
      });
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },
  });
  logger.info({ subject: bus.subjects.callWildcard }, "coordinator ready");

  let stopping: Promise<void> | undefined;
  return {
    id,
    registry: () => snapshot,
    stop() {
      stopping ??= (async () => {
        await subscription.drain().catch(() => {});
        await Promise.allSettled([...inFlight]);
        await asker.close();
        await stopWatching();
        lateContext.clear();
        logger.info("coordinator stopped");
      })();
      return stopping;
    },
  };
}
