/**
 * examples/connect-with-nkey.ts (docs/security.md "Deploying it") runs as it is against a
 * nats-server started with the configuration `hookbus auth` generates: the agent connects with
 * its seed file and inbox prefix, and its exec call is blocked by a worker and a coordinator that
 * run as their own users. The same program without the agent's seed cannot connect.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { runPolicy } from "../../../src/index.js";
import { noShell } from "../../../examples/no-shell-policy.js";
import { useAuthServer } from "../auth/harness.js";
import { startChild } from "../../support/child.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const program = fileURLToPath(new URL("../../../examples/connect-with-nkey.ts", import.meta.url));
const server = useAuthServer({
  namespace: "hookbus",
  agents: ["support-bot"],
  policies: ["no-shell"],
  coordinators: ["coordinator-1"],
  operators: ["operator"],
});

describe("examples/connect-with-nkey.ts", () => {
  it("connects as support-bot with its seed file and is blocked by no-shell", async () => {
    const operator = await server.as("operator", "operator");
    const registry = await RegistryStore.open(operator, new Subjects("hookbus"));
    await registry.apply({
      policies: [{ name: "no-shell", hooks: ["before_tool_call"], priority: 100 }],
    });
    const coordinator = await startCoordinator({
      nc: await server.as("coordinator", "coordinator-1"),
      namespace: "hookbus",
    });
    const worker = await runPolicy(noShell, {
      nc: await server.as("worker", "no-shell"),
      namespace: "hookbus",
    });
    try {
      await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
      const agent = server.generated().users.find((u) => u.role === "agent")!;
      const run = startChild(["--import", "tsx", program], {
        NATS_URL: server.url(),
        HOOKBUS_NKEY_FILE: agent.keyFile,
      });
      expect(await run.exited, run.errors()).toBe(0);
      expect(run.output()).toBe("exec: blocked by no-shell: shell access is not allowed\n");

      // Another user's seed is refused by the server: the key is the identity.
      const operatorKey = server.generated().users.find((u) => u.role === "operator")!;
      const imposter = startChild(["--import", "tsx", program], {
        NATS_URL: server.url(),
        HOOKBUS_NKEY_FILE: operatorKey.keyFile,
      });
      expect(await imposter.exited).not.toBe(0);
    } finally {
      await worker.stop();
      await coordinator.stop();
    }
  }, 120_000);
});
