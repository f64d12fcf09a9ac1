/**
 * The example policies on a real NATS server, through the public entry points: a coordinator
 * and a HookbusClient from the pipeline harness, plus policy workers (runPolicy) that each get a
 * connection of their own and the KV session state, as separate worker processes would.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterEach } from "vitest";
import {
  definePolicy,
  runPolicy,
  type Policy,
  type PolicyRunner,
  type RunPolicyOptions,
} from "../../../src/index.js";

export { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const workers: { runner: PolicyRunner; nc: NatsConnection }[] = [];

/** Stops every worker started with startWorker after each test (before the pipeline stops). */
export function useWorkers(): void {
  afterEach(async () => {
    for (const worker of workers.splice(0)) {
      await worker.runner.stop().catch(() => {});
      await worker.nc.close().catch(() => {});
    }
  }, 30_000);
}

export interface Worker {
  runner: PolicyRunner;
  /** Stop the runner and close its connection: the worker process is gone. */
  stop(): Promise<void>;
}

/** One worker "process": its own connection, KV session state (the default). */
export async function startWorker(
  url: string,
  namespace: string,
  policies: Policy | Policy[],
  options: Partial<Omit<RunPolicyOptions, "nc" | "namespace">> = {},
): Promise<Worker> {
  const nc = await connect({ servers: url, name: `${namespace}-worker-${workers.length}` });
  const runner = await runPolicy(policies, { ...options, nc, namespace });
  const entry = { runner, nc };
  workers.push(entry);
  return {
    runner,
    async stop() {
      await runner.stop();
      await nc.close();
      workers.splice(workers.indexOf(entry), 1);
    },
  };
}

/** The same policy, counting the before_tool_call requests this instance (worker) handled. */
export function counted(policy: Policy, counter: { n: number }): Policy {
  const inner = policy.hooks.before_tool_call;
  if (inner === undefined) throw new Error(`${policy.name} has no before_tool_call handler`);
  return definePolicy({
    name: policy.name,
    ...(policy.version === undefined ? {} : { version: policy.version }),
    hooks: {
      before_tool_call(event, context, tools) {
        counter.n++;
        return inner(event, context, tools);
      },
    },
  });
}
