/**
 * Runs an adapter example (examples/<file>) as it is, through tsx ("hookbus/…" resolved to the
 * sources by tsconfig.json "paths"), against a private nats-server, a coordinator and
 * examples/run-policy.ts serving no-shell; resolves to the example's output lines.
 */
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import { RegistryStore, startCoordinator, Subjects } from "../../../src/index.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, type FileNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/${file}`, import.meta.url));

export async function runAdapterExample(nats: FileNatsServer, file: string): Promise<string[]> {
  const nc = await nats.connect();
  const namespace = uniqueNamespace("examples-adapter");
  const env = { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: namespace };
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
    const agent = startChild(["--import", "tsx", example(file)], env);
    expect(await agent.exited, agent.errors()).toBe(0);
    return agent.output().split("\n");
  } finally {
    policy.child.kill("SIGTERM");
    await policy.exited;
    await coordinator.stop();
  }
}
