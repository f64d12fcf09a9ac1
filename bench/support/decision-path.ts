/**
 * The hookbus side every decision benchmark runs (`npm run bench`, `bench:profile`, `bench:seal`):
 * one process holding a coordinator, three policies on `before_tool_call` served by one runner,
 * and an agent client, each on its own NATS connection with the services' client settings.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { HookbusClient } from "../../src/agent/index.js";
import { connectionOptions } from "../../src/bus/connect.js";
import {
  startCoordinator,
  type Coordinator,
  type CoordinatorOptions,
} from "../../src/coordinator/index.js";
import { Subjects } from "../../src/bus/subjects.js";
import type { RegistryDocumentInput } from "../../src/registry/document.js";
import { RegistryStore } from "../../src/registry/store.js";
import { runPolicy, type PolicyRunner } from "../../src/worker/index.js";
import { benchPolicy } from "./bench-policy.js";

/** Connections to one server, opened by name and drained together. */
export class BenchConnections {
  private readonly all: NatsConnection[] = [];

  constructor(private readonly url: string) {}

  async open(name: string): Promise<NatsConnection> {
    const nc = await connect({ ...connectionOptions({ server: this.url }), name });
    this.all.push(nc);
    return nc;
  }

  async drain(): Promise<void> {
    for (const nc of this.all) await nc.drain();
  }
}

export interface DecisionPath {
  client: HookbusClient;
  coordinator: Coordinator;
  /** Close the client, the runner and the coordinator (the connections are the caller's). */
  stop(): Promise<void>;
}

/** One connection per role, as separate processes would have. */
export interface RoleConnections {
  agent: NatsConnection;
  coordinator: NatsConnection;
  worker: NatsConnection;
}

export async function openRoles(conns: BenchConnections): Promise<RoleConnections> {
  return {
    agent: await conns.open("agent"),
    coordinator: await conns.open("coordinator"),
    worker: await conns.open("worker"),
  };
}

/**
 * Resolves once the coordinator has the registry and the client is off its fast path. The
 * policies block `exec` and have no opinion otherwise; priorities 30, 20, 10.
 */
export async function startDecisionPath(
  roles: RoleConnections,
  namespace: string,
  coordinatorOptions: Partial<CoordinatorOptions> = {},
): Promise<DecisionPath> {
  const coordinator = await startCoordinator({
    ...coordinatorOptions,
    nc: roles.coordinator,
    namespace,
  });
  const policies = ["p1", "p2", "p3"].map((name) => benchPolicy(name));
  const runner: PolicyRunner = await runPolicy(policies, { nc: roles.worker, namespace });
  const client = await applyThenConnect(roles, namespace, coordinator, {
    policies: policies.map((p, i) => ({
      name: p.name,
      hooks: ["before_tool_call"],
      priority: 30 - i * 10,
    })),
  });
  return {
    client,
    coordinator,
    async stop() {
      await client.close();
      await runner.stop();
      await coordinator.stop();
    },
  };
}

/**
 * Applies `registry` to the namespace, then connects the agent client and resolves once the
 * coordinator has the registry and the client is off its fast path (or after 5 s: a path that
 * never gets there shows as a slow benchmark, not a hang).
 */
export async function applyThenConnect(
  roles: RoleConnections,
  namespace: string,
  coordinator: Coordinator,
  registry: RegistryDocumentInput,
): Promise<HookbusClient> {
  const store = await RegistryStore.open(roles.coordinator, new Subjects(namespace));
  await store.apply(registry);
  const client = await HookbusClient.connect({ nc: roles.agent, namespace });
  const deadline = Date.now() + 5000;
  while (
    (client.isFastPath("before_tool_call") || coordinator.registry().revision === 0) &&
    Date.now() < deadline
  )
    await new Promise((r) => setTimeout(r, 20));
  return client;
}

/** The context of lane `lane`'s calls: one agent session per lane, as concurrent agents have. */
export function laneContext(lane: number) {
  return {
    agentId: "bench-agent",
    sessionKey: `bench-session-${lane}`,
    runId: "run-1",
    toolName: "read_file",
    toolCallId: "call_1",
  };
}

/** The event every benchmark call carries (hookbus's and the baseline's). */
export const BENCH_EVENT = {
  toolName: "read_file",
  toolCallId: "call_1",
  params: { path: "/srv/data/report.csv", limit: 100 },
};

/** The benchmarks' call: a read_file tool call of the lane's session. */
export function laneCall(client: HookbusClient, lanes: number): (lane: number) => Promise<unknown> {
  const contexts = Array.from({ length: lanes }, (_, lane) => laneContext(lane));
  return (lane) => client.beforeToolCall(contexts[lane]!, BENCH_EVENT);
}

/**
 * `total` calls spread over `lanes` concurrent lanes (each lane one session, calling again as soon
 * as its last call returned); resolves to calls per second.
 */
export async function concurrent(
  call: (lane: number) => Promise<unknown>,
  total: number,
  lanes: number,
): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      while (next++ < total) await call(lane);
    }),
  );
  return total / ((performance.now() - t0) / 1000);
}
