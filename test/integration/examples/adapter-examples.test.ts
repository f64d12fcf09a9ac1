/**
 * The framework adapters' examples run as they are (through tsx, "hookbus/ai", "hookbus/pi" and "hookbus/openai-agents"
 * resolved to the sources by tsconfig.json "paths"), against a private nats-server, a
 * coordinator and examples/run-policy.ts serving no-shell: exec is not offered to the model, and
 * its call is refused when executed.
 */
import { describe, expect, it } from "vitest";
import { startChild } from "../../support/child.js";
import { useNatsServer } from "../../support/nats.js";
import { example, startNoShell } from "./no-shell-setup.js";

const nats = useNatsServer();

const notOffered =
  'before_tool_call blocked: tool "exec" was not offered to the model in this turn (before_llm_call removed it, or it was never offered)';

describe.each([
  {
    file: "ai-sdk.ts",
    framework: "AI SDK",
    refused: `exec: refused: HookbusError: ${notOffered}`,
  },
  {
    file: "pi-agent.ts",
    framework: "pi",
    refused: `exec: refused: HOOKBUS_BLOCKED: ${notOffered}`,
  },
  {
    // The refusal is the call's output, which the model reads.
    file: "openai-agents.ts",
    framework: "OpenAI Agents SDK",
    refused: `exec: HookbusError: ${notOffered}`,
  },
])("examples/$file", ({ file, framework, refused }) => {
  it(`the ${framework} agent is narrowed and gated by no-shell`, async () => {
    const { env, policy, coordinator } = await startNoShell(
      await nats.connect(),
      nats.url(),
      "examples-adapter",
    );
    try {
      const agent = startChild(["--import", "tsx", example(file)], env);
      expect(await agent.exited, agent.errors()).toBe(0);
      expect(agent.output().split("\n")).toEqual([
        "tools offered to the model: read_file",
        "tools offered to the model: read_file",
        "read_file: ran read_file on README.md",
        refused,
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
