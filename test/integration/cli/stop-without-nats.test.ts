/**
 * A coordinator or worker told to stop after NATS is gone (a deployment stopped all at once)
 * exits instead of hanging in reconnects: its drain fails, it closes the connection and its
 * HTTP endpoints, logs the failure and exits 1 (a drain that could not answer in-flight calls is
 * not a clean stop). Before, the process kept reconnecting until killed.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { connectNats } from "../../../src/bus/connect.js";
import { findNatsServer } from "../../../src/testing/index.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { Subjects } from "../../../src/bus/subjects.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const policy = fileURLToPath(new URL("../../../examples/no-shell-policy.ts", import.meta.url));

describe("SIGTERM after NATS is gone", () => {
  it("coordinator and worker exit 1 after a failed drain instead of reconnecting forever", async () => {
    const server = await findNatsServer({ own: true });
    const namespace = uniqueNamespace("stop-without-nats");
    const nc = await connectNats({ server: server.url });
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply({ policies: [{ name: "no-shell", hooks: ["before_tool_call"], priority: 100 }] });
    await nc.close();
    const env = {
      NATS_URL: server.url,
      HOOKBUS_NAMESPACE: namespace,
      HOOKBUS_CLI_SOURCE: "1",
    };
    const coordinator = startChild([cli, "coordinator", "--http", "127.0.0.1:0"], env);
    const worker = startChild([cli, "worker", policy, "--http", "127.0.0.1:0"], env);
    try {
      await until(() => coordinator.output().includes("coordinator ready"), 60_000, "coordinator");
      await until(() => worker.output().includes("worker ready"), 60_000, "worker");
      await server.stop();
      coordinator.child.kill("SIGTERM");
      worker.child.kill("SIGTERM");
      expect(await coordinator.exited, coordinator.output()).toBe(1);
      expect(await worker.exited, worker.output()).toBe(1);
      expect(coordinator.output()).toContain("drain failed");
    } finally {
      for (const run of [coordinator, worker])
        if (run.child.exitCode === null) run.child.kill("SIGKILL");
      await server.stop();
    }
  }, 120_000);
});
