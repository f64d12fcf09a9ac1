/**
 * What the agent examples run against: a coordinator, a registry naming no-shell, and
 * examples/run-policy.ts serving it as a child process, all in a namespace of their own.
 */
import { fileURLToPath } from "node:url";
import type { NatsConnection } from "@nats-io/transport-node";

import { startChild } from "../../support/child.js";
import { uniqueNamespace } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

export const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/${file}`, import.meta.url));

/** Resolves once the policy serves and the coordinator sees the registry; stop() with `stop`. */
export async function startNoShell(nc: NatsConnection, url: string, prefix: string) {
  const namespace = uniqueNamespace(prefix);
  const env = { NATS_URL: url, HOOKBUS_NAMESPACE: namespace };
  const coordinator = await startCoordinator({ nc, namespace });
  await (
    await RegistryStore.open(nc, new Subjects(namespace))
  ).apply({
    policies: [{ name: "no-shell", hooks: ["before_tool_call", "before_llm_call"], priority: 100 }],
  });
  const policy = startChild(["--import", "tsx", example("run-policy.ts")], env);
  try {
    await until(() => policy.output().includes("no-shell is serving"), 30_000, "the policy");
    await until(() => coordinator.registry().revision > 0, 5_000, "registry at the coordinator");
  } catch (error) {
    policy.child.kill("SIGKILL");
    await coordinator.stop();
    throw error;
  }
  return { env, policy, coordinator };
}
