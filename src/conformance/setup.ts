/**
 * The private setup a worker is tested in: its own nats-server (spawned, so it can be restarted),
 * a coordinator, a registry naming the policy, a durable observation consumer with a short
 * ack wait (so a crashed worker's record comes back within seconds), and an agent client.
 */
import { randomBytes } from "node:crypto";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, nanos, type NatsConnection } from "@nats-io/transport-node";
import { HookbusClient } from "../agent/client.js";
import { Bus } from "../bus/bus.js";
import { encodeToken } from "../bus/tokens.js";
import { MODIFYING_HOOK_NAMES } from "../catalog/catalog.js";
import { startCoordinator, type Coordinator } from "../coordinator/coordinator.js";
import { RegistryStore } from "../registry/store.js";
import { findNatsServer, type NatsServerHandle } from "../testing/nats.js";
import { observerDurableName } from "../worker/observer.js";
import { Probe } from "./probe.js";
import { startWorkerProcess, type WorkerProcess } from "./processes.js";

/** Short, so that a record left unacked by a killed worker comes back within the case's wait. */
export const OBSERVE_ACK_WAIT_MS = 4000;

export interface Setup {
  namespace: string;
  policy: string;
  nats: NatsServerHandle;
  nc: NatsConnection;
  bus: Bus;
  probe: Probe;
  client: HookbusClient;
  /** Start one more instance of the worker under test. */
  startWorker(): WorkerProcess;
  /** Every instance started so far (some may have exited). */
  workers: WorkerProcess[];
  /** A value of the policy's session state (JetStream KV), as the SDKs store it. */
  readState: (sessionKey: string, key: string) => Promise<unknown>;
  stop(): Promise<void>;
}

export async function startSetup(policy: string, command: readonly string[]): Promise<Setup> {
  const nats = await findNatsServer({ own: true });
  const namespace = `conformance-${randomBytes(4).toString("hex")}`;
  const stops: (() => Promise<void>)[] = [() => nats.stop()];
  const stop = async () => {
    for (const fn of stops.splice(0).reverse()) await fn().catch(() => {});
  };
  try {
    const connectOne = (name: string) =>
      connect({ servers: nats.url, name, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
    const nc = await connectOne("hookbus-conformance");
    const coordinatorNc = await connectOne("hookbus-conformance-coordinator");
    stops.push(
      () => nc.drain(),
      () => coordinatorNc.drain(),
    );
    const bus = await Bus.open(nc, { namespace });
    const store = await RegistryStore.open(nc, bus.subjects);
    await store.apply({
      policies: [{ name: policy, hooks: [...MODIFYING_HOOK_NAMES], priority: 0, timeoutMs: 2000 }],
    });
    const coordinator: Coordinator = await startCoordinator({ nc: coordinatorNc, namespace });
    stops.push(() => coordinator.stop());
    await ensureObserveConsumer(nc, namespace, policy);
    const client = await HookbusClient.connect({ nc, namespace, timeoutMs: 5000 });
    stops.push(() => client.close());
    const workers: WorkerProcess[] = [];
    stops.push(async () => {
      for (const worker of workers) worker.signal("SIGKILL");
      await Promise.all(workers.map((w) => w.exited));
    });
    const kv = await new Kvm(jetstream(nc)).create(`${namespace}_state`, { history: 1 });
    return {
      namespace,
      policy,
      nats,
      nc,
      bus,
      probe: new Probe(bus, policy),
      client,
      workers,
      startWorker() {
        const worker = startWorkerProcess(command, {
          NATS_URL: nats.url,
          HOOKBUS_NAMESPACE: namespace,
        });
        workers.push(worker);
        return worker;
      },
      readState: async (sessionKey, key) => {
        const entry = await kv.get(`${policy}.${encodeToken(sessionKey)}.${encodeToken(key)}`);
        return entry === null || entry.operation !== "PUT" ? undefined : entry.json();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The consumer both SDKs use for after_tool_call, made first so its ack wait is short. */
async function ensureObserveConsumer(
  nc: NatsConnection,
  namespace: string,
  policy: string,
): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await jsm.consumers.add(`${namespace.toUpperCase()}_LOG`, {
    durable_name: observerDurableName(namespace, policy, "after_tool_call"),
    filter_subject: `${namespace}.audit.*.*.after_tool_call.observed`,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.New,
    ack_wait: nanos(OBSERVE_ACK_WAIT_MS),
    max_deliver: -1,
  });
}
