/**
 * The coordinator process role: any number run side by side in one queue group. Each watches
 * the registry, answers calls through CallHandler, and records late verdicts.
 */
import type { Registry } from "prom-client";
import { nuid, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { ApprovalStore } from "../approvals/store.js";
import { SealedApprovalStore } from "../approvals/sealed-store.js";
import { Bus, type BusOptions } from "../bus/bus.js";
import { defaultReplicas, ensureLogStreams, type LogSettings } from "../bus/streams.js";
import { ConnectionWatch } from "../bus/connection-watch.js";
import { beforeDeadline } from "../foundation/deadline.js";
import { AgentRateLimiter, resolveLimits, type Limits } from "../foundation/limits.js";
import { redactionKeyFromEnv } from "../log/redaction.js";
import { RegistryStore } from "../registry/store.js";
import { RegistrySnapshot } from "../registry/snapshot.js";
import { StopListFollower, StopStore, type StopListState } from "../registry/stops.js";
import { HookbusError } from "../foundation/errors.js";
import { ApprovalService } from "./approval-service.js";
import { CallHandler } from "./call-handler.js";
import { openIntake, WorkInFlight, type Intake } from "./intake.js";
import { LateContexts } from "./late-contexts.js";
import { recordLateVerdict } from "./late-verdicts.js";
import { LogWriter } from "./log-writer.js";
import { ObservationHandler } from "./observation-handler.js";
import { PolicyAsker } from "./policy-asker.js";
import { CedarEvaluator, type CedarPreparation } from "./cedar-evaluator.js";
import { loadCallFacts } from "../policy/call-facts.js";
import { MemorySessionFactStore, type SessionFactStore } from "../cedar/session-facts.js";
import { CoordinatorTelemetry } from "./telemetry.js";
import { RecordSigner } from "./record-signer.js";
import type { RecordSigningKey } from "../log/sign/keys.js";
import type { Subjects } from "../bus/subjects.js";
import { requireKek, type KeyEncryptionKey } from "../privacy/kek.js";
import { DataKeyStore } from "../privacy/data-keys.js";
import { RecordKeys } from "../privacy/record-keys.js";
import { StateKeyService, type StateKeyQuota } from "../privacy/state-keys.js";

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
  /**
   * Where the session facts of Cedar policies live (docs/cedar.md). Default: this process's
   * memory (the most recent 10,000 sessions), which is exact with one coordinator per namespace.
   */
  sessionFacts?: SessionFactStore;
  /**
   * The key this coordinator signs the records it writes with (`signingKeyFromFile`; issued by
   * `hookbus auth`, docs/security.md). Without one its records are unsigned: it logs a warning,
   * `hookbus status` names it while other coordinators sign, and `audit verify` given the
   * trusted coordinator keys reports its records as `unsigned-record`.
   */
  signingKey?: RecordSigningKey;
  /** Refuse to start without `signingKey` (HOOKBUS_SIGN_KEY_INVALID). */
  requireSigning?: boolean;
  /**
   * Encrypt the personal fields of every record per data subject (docs/privacy.md). The KEK
   * defaults to HOOKBUS_PRIVACY_KEK / HOOKBUS_PRIVACY_KEK_FILE; none is HOOKBUS_PRIVACY_KEK_INVALID.
   */
  privacy?: {
    kek?: KeyEncryptionKey;
    /** How many new session state keys each policy may make (docs/privacy.md, "Session state"). */
    stateKeyQuota?: StateKeyQuota;
  };
}

export interface Coordinator {
  readonly id: string;
  /** The registry revision in force. */
  registry(): RegistrySnapshot;
  /** The emergency stop list in force, and whether it is readable (docs/operations.md). */
  stops(): StopListState;
  /** Prometheus metrics (prom-client), e.g. for your own `/metrics` endpoint. */
  readonly metrics: Registry;
  /** Connected to NATS with the registry loaded, and not stopping (for /readyz). */
  ready(): { ready: boolean; reasons: string[] };
  /** Stop taking calls, finish the ones in flight (each answered after its record is stored), release resources. */
  stop(): Promise<void>;
}

/** Calls handled at once by one coordinator beyond which new ones get HOOKBUS_OVERLOADED. */
export const DEFAULT_MAX_IN_FLIGHT = 1024;

/** How long start waits for the server to confirm the coordinator's subscriptions. */
const READY_FLUSH_MS = 10_000;

/** Step 1: the bus (with the call limits on its codec), the process id and its logger. */
async function connect(options: CoordinatorOptions) {
  const limits = resolveLimits(options.limits);
  const bus = await Bus.open(options.nc, {
    ...options,
    codec: { ...options.codec, limits: { ...limits, ...options.codec?.limits } },
  });
  const id = options.id ?? `coordinator-${nuid.next().slice(-8)}`;
  return { bus, limits, id, logger: bus.logger.child({ coordinator: id }) };
}

/**
 * Step 2: streams and buckets. Every JetStream set-up call comes before the first subscription
 * (the registry watch), so a start that fails on a JetStream that does not answer yet leaves
 * nothing behind to retry over.
 */
async function ensureStores(options: CoordinatorOptions, bus: Bus, logger: Logger) {
  await ensureLogStreams(bus.jsm, bus.subjects, options.log, logger);
  const registry = await RegistryStore.open(options.nc, bus.subjects);
  const approvals = await ApprovalStore.open(options.nc, bus.subjects);
  const stops = await StopStore.open(options.nc, bus.subjects);
  return { registry, approvals, stops };
}

function logRevision(logger: Logger, next: RegistrySnapshot, prepared: CedarPreparation): void {
  logger.info(
    { revision: next.revision, policies: next.document.policies.length, cedar: prepared },
    "registry revision in force",
  );
  if (prepared.failed.length > 0) {
    logger.warn(
      { revision: next.revision, policies: prepared.failed },
      "Cedar policy sets that do not load answer with an error (their failure mode decides): fix them and apply the registry again",
    );
  }
}

/**
 * Step 3: the registry revision in force and the emergency stop list, followed live. A stop list
 * that cannot be read at start fails the start: a coordinator that took calls without it would
 * have to block them all anyway.
 */
async function followRegistry(
  nc: NatsConnection,
  store: RegistryStore,
  stopStore: StopStore,
  cedar: CedarEvaluator,
  logger: Logger,
) {
  let snapshot = RegistrySnapshot.empty();
  let firstInForce: Promise<unknown> | undefined;
  const stopWatch = await store.watch((next) => {
    // The revision's Cedar sets are loaded (off this thread) before it is in force, so no call
    // waits for them; revisions come into force in order.
    const prepared = cedar
      .prepare(next)
      .then((cedarPrepared) => {
        if (next.revision > snapshot.revision) snapshot = next;
        logRevision(logger, next, cedarPrepared);
      })
      .catch((error: unknown) => {
        logger.error({ err: error, revision: next.revision }, "registry revision not prepared");
      });
    firstInForce ??= prepared;
  }, logger);
  await firstInForce; // the revision in force at start, with its Cedar sets, before any call is taken
  const stops = new StopListFollower(stopStore, logger);
  const first = await stops.start();
  // Back from a disconnect: re-read the list before deciding by it (a stop may have been stored).
  const unwatch = ConnectionWatch.of(nc).onChange((change) => {
    if (change === "reconnect") stops.reconnected();
  });
  if (!first.readable) {
    unwatch();
    stops.stop();
    await stopWatch();
    throw new HookbusError(
      "HOOKBUS_STOP_LIST_UNREADABLE",
      `the emergency stop list cannot be read: ${first.why}`,
      {},
      first.error,
    );
  }
  return {
    current: () => snapshot,
    stops: () => stops.state(),
    stopList: stops,
    stop: async () => {
      unwatch();
      stops.stop();
      await stopWatch();
      await cedar.close();
    },
  };
}

type Started = Awaited<ReturnType<typeof connect>>;
type Followed = Awaited<ReturnType<typeof followRegistry>>;

/** The coordinator's metrics and liveness: what it holds, knows and signs with. */
function telemetryOf(
  options: CoordinatorOptions,
  { bus, id }: Pick<Started, "bus" | "id">,
  { registry, cedar }: { registry: Followed; cedar: CedarEvaluator },
  inFlight: WorkInFlight,
  signer: RecordSigner | undefined,
): CoordinatorTelemetry {
  return new CoordinatorTelemetry({
    bus,
    id,
    inFlight: () => inFlight.size,
    registry: registry.current,
    cedarSets: () => cedar.describeSets(registry.current()),
    ...(signer === undefined ? {} : { signingKey: signer.publicKey }),
    stops: registry.stops,
    ...(options.livenessIntervalMs === undefined
      ? {}
      : { livenessIntervalMs: options.livenessIntervalMs }),
  });
}

/** Step 4: what handles a call and an observation, and what records late verdicts. */
function buildServices(
  options: CoordinatorOptions,
  { bus, limits, id, logger }: Started,
  { registry, cedar }: { registry: Followed; cedar: CedarEvaluator },
  approvalStore: ApprovalStore,
  signer: RecordSigner | undefined,
  keys: RecordKeys | undefined,
) {
  // No chain work here: the sealer seals the log after the fact (src/sealer/); signatures are
  // batched by the signer.
  const writer = new LogWriter(bus, signer, keys);
  const redactionKey = options.redactionKey ?? redactionKeyFromEnv();
  const rateLimiter = new AgentRateLimiter(limits);
  const inFlight = new WorkInFlight(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
  const telemetry = telemetryOf(options, { bus, id }, { registry, cedar }, inFlight, signer);
  // Calls whose policies may still answer late: what a late record needs to say "would have blocked".
  const lateWindowMs = options.lateWindowMs ?? 60_000;
  const lateCalls = new LateContexts(lateWindowMs);
  const lateDeps = {
    bus,
    writer,
    calls: lateCalls,
    coordinatorId: id,
    redactionKey,
    logger,
    counted: (policy: string) => telemetry.lateVerdict(policy),
  };
  const asker = new PolicyAsker(bus, {
    lateWindowMs,
    onLate: (late) => void recordLateVerdict(lateDeps, late),
  });
  const approvals = new ApprovalService({
    nc: options.nc,
    bus,
    // Sealed at rest when the namespace encrypts (docs/privacy.md, "Approvals").
    store: keys === undefined ? approvalStore : new SealedApprovalStore(approvalStore, keys.store),
    encrypts: keys !== undefined,
    writer,
    coordinatorId: id,
    logger,
    redact: () => registry.current().document.redact ?? [],
    redactionKey,
    stops: { list: registry.stopList, registry: registry.current },
    onSettled: (entry) => cedar.settled(entry),
    ...(options.approvalSweepMs === undefined ? {} : { sweepIntervalMs: options.approvalSweepMs }),
  });
  // What calls and observations share; a clear blob is refused when the namespace encrypts.
  const intake = {
    ...{ cedar, bus, writer, registry: registry.current, coordinatorId: id },
    ...{ limits, rateLimiter, redactionKey, sealedBlobsOnly: keys !== undefined },
  };
  const calls = new CallHandler({
    ...intake,
    asker,
    stops: registry.stopList,
    telemetry,
    approvals,
    onCallStarted: (callKey, context, _event, called) =>
      lateCalls.started(callKey, { context, snapshot: called }),
    onCallFinished: (callKey) => lateCalls.finished(callKey),
  });
  const observations = new ObservationHandler(intake);
  return {
    inFlight,
    telemetry,
    lateCalls,
    asker,
    approvals,
    calls,
    observations,
    signer,
  };
}

/** Step 3b: the signer of the records this coordinator writes, when it has a key. */
/** Step 3b: the data keys, when the namespace encrypts (a missing KEK stops the start). */
async function openRecordKeys(
  privacy: CoordinatorOptions["privacy"],
  nc: NatsConnection,
  subjects: Subjects,
): Promise<RecordKeys | undefined> {
  if (privacy === undefined) return undefined;
  const kek = privacy.kek ?? requireKek();
  return new RecordKeys(await DataKeyStore.open(nc, subjects, kek));
}

async function startSigner(options: CoordinatorOptions, { bus, id, logger }: Started) {
  if (options.signingKey === undefined) {
    if (options.requireSigning === true) {
      throw new HookbusError(
        "HOOKBUS_SIGN_KEY_INVALID",
        "this coordinator must sign its records but has no signing key: pass --sign-key-file (issued by `hookbus auth`)",
      );
    }
    logger.warn("no signing key: the records this coordinator writes are not signed");
    return undefined;
  }
  return RecordSigner.start({
    bus,
    key: options.signingKey,
    coordinatorId: id,
    logger,
    replicas: options.log?.replicas ?? defaultReplicas(),
  });
}

type Services = ReturnType<typeof buildServices> & { stateKeys?: StateKeyService | undefined };

/** Workers that seal session state get its keys here (docs/privacy.md, "Session state"). */
function stateKeyService(
  options: CoordinatorOptions,
  started: Started,
  keys: RecordKeys | undefined,
) {
  if (keys === undefined) return undefined;
  return new StateKeyService(
    options.nc,
    started.bus.subjects,
    keys.store,
    started.logger,
    options.privacy?.stateKeyQuota,
  );
}

/** Step 5: take calls and observations (and approval answers, and verdicts on the asker's inbox). */
function subscribe(options: CoordinatorOptions, started: Started, services: Services): Intake {
  services.approvals.start();
  services.stateKeys?.start(started.bus.subjects.coordinatorQueue);
  const intake = openIntake({
    nc: options.nc,
    bus: started.bus,
    inFlight: services.inFlight,
    logger: started.logger,
    handleCall: (msg) => services.telemetry.traceCall(msg, () => services.calls.handle(msg)),
    handleObservation: (msg) => services.observations.handle(msg),
  });
  services.telemetry.start();
  return intake;
}

/**
 * Step 6: "ready" means the server routes to us: a flush returns once it has processed every
 * subscription above. Bounded: on a connection that is down the subscriptions are re-sent on
 * reconnect anyway, so the coordinator starts without the confirmation (and says so).
 */
async function confirmReady(nc: NatsConnection, logger: Logger): Promise<void> {
  await beforeDeadline(
    nc.flush(),
    Date.now() + READY_FLUSH_MS,
    "HOOKBUS_COORDINATOR_UNAVAILABLE",
    () => `the server did not confirm the coordinator's subscriptions within ${READY_FLUSH_MS} ms`,
  ).catch((error: unknown) => logger.warn({ err: error }, "starting without the confirmation"));
}

/** Step 7 (on stop): no new work, finish what is in flight (each answered after its record), release. */
async function drain(intake: Intake, services: Services, registry: Followed, logger: Logger) {
  await services.telemetry.stop();
  await intake.drain();
  await services.inFlight.settled();
  await services.approvals.stop();
  await services.stateKeys?.stop();
  // After every record of this run is written: sign the last of them.
  await services.signer?.stop();
  await services.asker.close();
  await registry.stop();
  services.lateCalls.clear();
  logger.info("coordinator stopped");
}

export async function startCoordinator(options: CoordinatorOptions): Promise<Coordinator> {
  // Before anything is opened: every call's facts parse its shell commands, and a coordinator
  // without the parser could decide nothing (HOOKBUS_SHELL_PARSER_UNAVAILABLE says what to install).
  await loadCallFacts();
  const started = await connect(options);
  const stores = await ensureStores(options, started.bus, started.logger);
  const signer = await startSigner(options, started);
  const cedar = new CedarEvaluator(options.sessionFacts ?? new MemorySessionFactStore());
  const registry = await followRegistry(
    options.nc,
    stores.registry,
    stores.stops,
    cedar,
    started.logger,
  );
  const keys = await openRecordKeys(options.privacy, options.nc, started.bus.subjects);
  const services: Services = {
    ...buildServices(options, started, { registry, cedar }, stores.approvals, signer, keys),
    stateKeys: stateKeyService(options, started, keys),
  };
  const intake = subscribe(options, started, services);
  await confirmReady(options.nc, started.logger);
  started.logger.info({ subject: started.bus.subjects.callWildcard }, "coordinator ready");

  let stopping: Promise<void> | undefined;
  return {
    id: started.id,
    registry: registry.current,
    stops: registry.stops,
    metrics: services.telemetry.metrics,
    ready: () => services.telemetry.ready(),
    stop: () => (stopping ??= drain(intake, services, registry, started.logger)),
  };
}
