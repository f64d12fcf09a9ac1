/**
 * The whole pipeline on a real NATS server, through the public entry point only: agent
 * (HookbusClient), coordinator (startCoordinator), policy workers (definePolicy + runPolicy),
 * registry (RegistryStore.apply) and the log stream, each on its own connection, in a namespace
 * of its own per test. One NATS server per test file (`useNatsServer()`).
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, afterEach, expect } from "vitest";
import {
  Bus,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
  type DecisionRecord,
  type Policy,
  type PolicyRunner,
  type RunPolicyOptions,
} from "../../../src/index.js";
import { readStoredLog, type StoredRecord } from "../../support/log.js";
import {
  connectTo,
  uniqueNamespace,
  useNatsServer as useFileNatsServer,
} from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import {
  startCoordinator,
  type Coordinator,
  type CoordinatorOptions,
} from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { type RegistryDocumentInput } from "../../../src/registry/document.js";

export { uniqueNamespace } from "../../support/nats.js";
export { rejection, sleep, until } from "../../support/wait.js";
export type { StoredRecord } from "../../support/log.js";

const open = new Set<Pipeline>();

/** Spawn (or find) one NATS server for the file; each test's pipelines stop after it, the server after the file. */
export function useNatsServer(): { url: () => string } {
  const nats = useFileNatsServer({ hookTimeoutMs: 30_000 });
  afterEach(async () => {
    for (const pipeline of [...open]) await pipeline.stop();
  }, 30_000);
  // Registered after the server's hooks, so it runs before the server stops.
  afterAll(async () => {
    for (const pipeline of [...open]) await pipeline.stop();
  }, 30_000);
  return { url: () => nats.url() };
}

export interface PipelineOptions {
  /** Applied before the coordinator and the client start (so both begin at this revision). */
  registry?: RegistryDocumentInput;
  /** Each served by its own runPolicy, on the workers' connection. */
  policies?: Policy[];
  /** Extra options for every runPolicy. */
  worker?: Partial<Omit<RunPolicyOptions, "nc" | "namespace">>;
  coordinator?: Partial<Omit<CoordinatorOptions, "nc" | "namespace">>;
  /** The agent's per-call deadline (default 10 s). */
  clientTimeoutMs?: number;
  namespace?: string;
}

export interface Pipeline {
  namespace: string;
  subjects: Subjects;
  /** A Bus on the reader's connection: the log stream and the body codec. */
  bus: Bus;
  connections: {
    agent: NatsConnection;
    coordinator: NatsConnection;
    workers: NatsConnection;
    reader: NatsConnection;
  };
  client: HookbusClient;
  coordinator: Coordinator;
  runners: PolicyRunner[];
  store: RegistryStore;
  /** The revision of the registry applied at start (0 when none was). */
  revision: number;
  /** Apply a registry document while everything runs; resolves once coordinator and client use it. */
  apply(document: RegistryDocumentInput): Promise<number>;
  /** Serve more policies (e.g. one added to the registry later). */
  serve(policy: Policy): Promise<PolicyRunner>;
  /** Every record of the namespace's log stream, in order. */
  readLog(): Promise<StoredRecord[]>;
  /** The decision records with this call id (normally exactly one). */
  decisionRecords(callId: string): Promise<(StoredRecord & { record: DecisionRecord })[]>;
  /** The single decision record of a call; fails when there is none or more than one. */
  decisionRecord(callId: string): Promise<StoredRecord & { record: DecisionRecord }>;
  stop(): Promise<void>;
}

export async function startPipeline(url: string, options: PipelineOptions = {}): Promise<Pipeline> {
  const namespace = options.namespace ?? uniqueNamespace();
  const subjects = new Subjects(namespace);
  const connections = {
    agent: await connectTo(url, `${namespace}-agent`),
    coordinator: await connectTo(url, `${namespace}-coordinator`),
    workers: await connectTo(url, `${namespace}-workers`),
    reader: await connectTo(url, `${namespace}-reader`),
  };
  const stops: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      open.delete(pipeline);
      for (const fn of stops.splice(0).reverse()) await fn().catch(() => {});
      for (const nc of Object.values(connections)) await nc.drain().catch(() => {});
    })();
    return stopping;
  };
  // Registered early so a failure half way still cleans up.
  const pipeline = { stop } as Pipeline;
  open.add(pipeline);

  try {
    const store = await RegistryStore.open(connections.reader, subjects);
    const revision =
      options.registry === undefined ? 0 : (await store.apply(options.registry)).revision;
    // The coordinator creates the log and blob streams; workers that observe need the log stream.
    const coordinator = await startCoordinator({
      ...options.coordinator,
      nc: connections.coordinator,
      namespace,
    });
    stops.push(() => coordinator.stop());
    const runners: PolicyRunner[] = [];
    const serve = async (policy: Policy) => {
      const runner = await runPolicy(policy, {
        state: new MemorySessionStateStore(),
        ...options.worker,
        nc: connections.workers,
        namespace,
      });
      runners.push(runner);
      stops.push(() => runner.stop());
      return runner;
    };
    for (const policy of options.policies ?? []) await serve(policy);
    const client = await HookbusClient.connect({
      nc: connections.agent,
      namespace,
      timeoutMs: options.clientTimeoutMs ?? 10_000,
    });
    stops.push(() => client.close());
    const bus = await Bus.open(connections.reader, { namespace });

    const readLog = () => readStoredLog(bus);

    const decisionRecords = async (callId: string) =>
      (await readLog()).filter(
        (r): r is StoredRecord & { record: DecisionRecord } =>
          r.record.kind === "decision" && r.record.callId === callId,
      );

    Object.assign(pipeline, {
      namespace,
      subjects,
      bus,
      connections,
      client,
      coordinator,
      runners,
      store,
      revision,
      serve,
      readLog,
      decisionRecords,
      async decisionRecord(callId: string) {
        const found = await decisionRecords(callId);
        if (found.length !== 1)
          throw new Error(`expected one decision record of ${callId}, found ${found.length}`);
        return found[0]!;
      },
      async apply(document: RegistryDocumentInput) {
        const applied = await store.apply(document);
        await until(
          () =>
            coordinator.registry().revision >= applied.revision &&
            (client.registryRevision ?? 0) >= applied.revision,
          5000,
          `registry revision ${applied.revision} in force`,
        );
        return applied.revision;
      },
    } satisfies Omit<Pipeline, "stop">);
    return pipeline;
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface ExpectedOutcome {
  policy: string;
  priority: number;
  effect: "applied" | "no-opinion" | "failed-closed" | "failed-open";
  status?: "ok" | "error" | "timeout" | "invalid" | "unavailable";
  mode?: "enforce" | "shadow";
  version?: string;
  /** The verdict the policy answered; `undefined` asserts it recorded none. */
  verdict: unknown;
  /** Lower bound of the recorded latency (a policy that sleeps). */
  minLatencyMs?: number;
}

/** `policy` at `priority` answered `verdict` and the merge applied it (enforced, status ok). */
export function applied(policy: string, priority: number, verdict: unknown): ExpectedOutcome {
  return { policy, priority, effect: "applied", verdict };
}

/** `policy` at `priority` answered nothing (enforced, status ok). */
export function noOpinion(policy: string, priority: number): ExpectedOutcome {
  return { policy, priority, effect: "no-opinion", verdict: undefined };
}

/**
 * The call's one decision record says what the agent was told, who said what in merge order,
 * and the registry revision it was decided with; its subject carries the outcome.
 */
export async function expectDecisionRecord(
  p: Pipeline,
  call: {
    callId: string;
    hook: string;
    context: { agentId: string; sessionKey: string };
    received: { outcome: string };
    revision?: number;
  },
  outcomes: ExpectedOutcome[],
): Promise<StoredRecord & { record: DecisionRecord }> {
  const stored = await p.decisionRecord(call.callId);
  const { record } = stored;
  expect(record.kind).toBe("decision");
  expect(record.hook).toBe(call.hook);
  expect(record.decision).toEqual(call.received);
  expect(record.registryRevision).toBe(call.revision ?? p.revision);
  expect(record.context).toMatchObject(call.context);
  expect(kindToken(stored.subject)).toBe(call.received.outcome);
  expect(stored.subject).toBe(
    p.subjects.audit(
      call.context.agentId,
      call.context.sessionKey,
      call.hook as Parameters<Subjects["audit"]>[2],
      call.received.outcome as "allow",
    ),
  );
  expect(stored.headers?.get("Hookbus-Call-Id")).toBe(call.callId);
  expect(record.outcomes.map((o) => o.policy)).toEqual(outcomes.map((o) => o.policy));
  outcomes.forEach((want, i) => {
    const got = record.outcomes[i]!;
    expect(got, want.policy).toMatchObject({
      policy: want.policy,
      priority: want.priority,
      mode: want.mode ?? "enforce",
      status: want.status ?? "ok",
      effect: want.effect,
      ...(want.version === undefined ? {} : { version: want.version }),
    });
    expect(got.verdict, `${want.policy} verdict`).toEqual(want.verdict);
    expect(got.latencyMs, `${want.policy} latency`).toBeGreaterThan(0);
    expect(got.latencyMs, `${want.policy} latency`).toBeLessThan(10_000);
    if (want.minLatencyMs !== undefined)
      expect(got.latencyMs, `${want.policy} latency`).toBeGreaterThanOrEqual(want.minLatencyMs);
  });
  expect(Date.parse(record.decidedAt)).toBeGreaterThanOrEqual(Date.parse(record.receivedAt));
  return stored;
}

/** The last token of an audit subject: the decision's outcome, or the record kind. */
export function kindToken(subject: string): string {
  return subject.split(".").at(-1) ?? "";
}
