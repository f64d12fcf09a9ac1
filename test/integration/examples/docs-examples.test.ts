/**
 * The docs' samples that are programs in examples/ (beside examples.test.ts, the README's): run
 * as they are, through tsx or the CLI, against a private nats-server.
 * - examples/audit-library.ts (docs/audit.md "The library API")
 * - examples/my-policies.ts (docs/example-policies.md)
 * docs/replay.md's test sample is examples/replay-policy.test.ts, which vitest runs itself;
 * docs/security.md's is connect-with-nkey.test.ts.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  HookbusClient,
  isHookbusBlockedError,
  runPolicy,
  type HookbusClient as Client,
} from "../../../src/index.js";
import { noShell } from "../../../examples/no-shell-policy.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/${file}`, import.meta.url));
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const nats = useNatsServer();

/** The block's reason, or "allowed". */
async function execAs(client: Client, sessionKey: string, command: string): Promise<string> {
  try {
    await client.beforeToolCall(
      { agentId: "support-bot", sessionKey, runId: "run-1" },
      { toolName: "exec", params: { command } },
    );
    return "allowed";
  } catch (error) {
    if (isHookbusBlockedError(error)) return `blocked by ${error.blockedBy}: ${error.blockReason}`;
    throw error;
  }
}

describe("examples/ from the docs", () => {
  it("audit-library.ts lists the day's blocks, a session's timeline, then follows new records until SIGINT", async () => {
    const nc = await nats.connect();
    const namespace = uniqueNamespace("audit-example");
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply({ policies: [{ name: "no-shell", hooks: ["before_tool_call"], priority: 100 }] });
    const coordinator = await startCoordinator({ nc, namespace });
    const worker = await runPolicy(noShell, { nc, namespace });
    const client = await HookbusClient.connect({ nc, namespace });
    const env = { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: namespace };
    let run: ReturnType<typeof startChild> | undefined;
    try {
      await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
      expect(await execAs(client, "conv-42", "ls")).toBe(
        "blocked by no-shell: shell access is not allowed",
      );
      run = startChild(
        ["--import", "tsx", example("audit-library.ts"), "support-bot", "conv-42"],
        env,
      );
      await until(() => run!.output().includes("following new records"), 60_000, "the tail");
      const output = run.output();
      expect(output.split("\n")[0]).toMatch(/^\S+Z support-bot no-shell$/);
      expect(output).toMatch(/matched: 1\b/);
      expect(output).toMatch(/^before_tool_call block .*no-shell/m);

      // A record stored after the tail started is delivered to it.
      await execAs(client, "conv-43", "pwd");
      await until(
        () => / decision\n/.test(run!.output().split("following")[1] ?? ""),
        30_000,
        "the new record",
      );
      run.child.kill("SIGINT");
      expect(await run.exited, run.errors()).toBe(0);
    } finally {
      if (run?.child.exitCode === null) run.child.kill("SIGKILL");
      await client.close();
      await worker.stop();
      await coordinator.stop();
    }
  }, 120_000);

  it("my-policies.ts does nothing when imported, and `hookbus worker` serves both configured policies from it", async () => {
    const imported = startChild(["--import", "tsx", example("my-policies.ts")], {});
    expect(await imported.exited, imported.errors()).toBe(0);
    expect(imported.output()).toBe("");

    const nc = await nats.connect();
    const namespace = uniqueNamespace("my-policies");
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply({
      policies: [
        { name: "tool-policy", hooks: ["before_tool_call"], priority: 100 },
        { name: "session-budget", hooks: ["before_tool_call"], priority: 80 },
      ],
    });
    const coordinator = await startCoordinator({ nc, namespace });
    const worker = startChild([cli, "worker", example("my-policies.ts")], {
      NATS_URL: nats.url(),
      HOOKBUS_NAMESPACE: namespace,
      HOOKBUS_CLI_SOURCE: "1",
    });
    const client = await HookbusClient.connect({ nc, namespace });
    try {
      await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
      // Both policies answer (a missing worker would fail the fail-closed default).
      await until(
        async () => (await execAs(client, "s-1", "ls")) === "allowed",
        60_000,
        "the worker serving both policies",
      );
      expect(await execAs(client, "s-1", "sudo rm -rf /")).toMatch(/^blocked by tool-policy: /);
      worker.child.kill("SIGTERM");
      expect(await worker.exited, worker.errors()).toBe(0);
    } finally {
      if (worker.child.exitCode === null) worker.child.kill("SIGKILL");
      await client.close();
      await coordinator.stop();
    }
  }, 120_000);
});
