/**
 * examples/ai-sdk.ts runs as it is (through tsx, "hookbus/ai" resolved to the sources by
 * tsconfig.json "paths"), against a private nats-server, a coordinator and examples/run-policy.ts
 * serving no-shell: exec is not offered to the model, and its call is refused when executed.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { RegistryStore, startCoordinator, Subjects } from "../../../src/index.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const example = (file: string) =>
  fileURLToPath(new URL(`../../../examples/${file}`, import.meta.url));
const nats = useNatsServer();

describe("examples/ai-sdk.ts", () => {
  it("the AI SDK agent is narrowed and gated by no-shell", async () => {
    const nc = await nats.connect();
    const namespace = uniqueNamespace("examples-ai");
    const env = { NATS_URL: nats.url(), HOOKBUS_NAMESPACE: namespace };
    const coordinator = await startCoordinator({ nc, namespace });
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply({
      policies: [
        { name: "no-shell", hooks: ["before_tool_call", "before_llm_call"], priority: 100 },
      ],
    });
    const policy = startChild(["--import", "tsx", example("run-policy.ts")], env);
    try {
      await until(() => policy.output().includes("no-shell is serving"), 30_000, "the policy");
      await until(() => coordinator.registry().revision > 0, 5_000, "registry at the coordinator");
      const agent = startChild(["--import", "tsx", example("ai-sdk.ts")], env);
      expect(await agent.exited, agent.errors()).toBe(0);
      expect(agent.output().split("\n")).toEqual([
        "tools offered to the model: read_file",
        "tools offered to the model: read_file",
        "read_file: ran read_file on README.md",
        'exec: refused: HookbusError: before_tool_call blocked: tool "exec" was not offered to the model in this turn (before_llm_call removed it, or it was never offered)',
        "answer: I read README.md; exec was refused.",
        "",
      ]);
    } finally {
      policy.child.kill("SIGTERM");
      await policy.exited;
      await coordinator.stop();
    }
  }, 90_000);
});
