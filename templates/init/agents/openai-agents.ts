/**
 * hookbus in an OpenAI Agents SDK agent (`hookbus/openai-agents`): the model is wrapped with
 * hookbusModel, the tools with hookbusTools, and each user turn runs inside withHookbusRun. The
 * model here is a scripted stand-in (the SDK's own ScriptedModel) so the program runs offline;
 * use any Model instead (e.g. `new OpenAIResponsesModel(new OpenAI(), "gpt-5")`). With the project's
 * policies served (`npm run worker`): `npm run try`.
 */
import { connect } from "@nats-io/transport-node";
import { Agent, Runner, tool } from "@openai/agents";
import {
  assistantMessage,
  functionCall,
  modelResponder,
  ScriptedModel,
} from "@openai/agents/testing";
import { HookbusClient } from "hookbus";
import { hookbusModel, hookbusTools, withHookbusRun } from "hookbus/openai-agents";
import { z } from "zod";

// Turn 1 calls both tools (exec although it is not offered), turn 2 answers.
const turns = [
  [
    functionCall("read_file", { path: "README.md" }, { callId: "c1" }),
    functionCall("exec", { command: "rm -rf /" }, { callId: "c2" }),
  ],
  [assistantMessage("I read README.md; exec was refused.")],
];
const standIn = new ScriptedModel(
  turns.map((output) =>
    modelResponder(({ request }) => {
      console.log(`tools offered to the model: ${request.tools.map((t) => t.name).join(", ")}`);
      return output;
    }),
  ),
);

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const client = await HookbusClient.connect({
  nc,
  namespace: process.env.HOOKBUS_NAMESPACE ?? "hookbus",
});
// Created once, reused by every run and session: the run is found through withHookbusRun.
const agent = new Agent({
  name: "support-bot",
  instructions: "Help with the project.",
  model: hookbusModel(standIn, { name: "scripted" }),
  tools: hookbusTools([
    tool({
      name: "read_file",
      description: "Read a file",
      parameters: z.object({ path: z.string() }),
      execute: ({ path }) => `ran read_file on ${path}`,
    }),
    tool({
      name: "exec",
      description: "Run a shell command",
      parameters: z.object({ command: z.string() }),
      execute: ({ command }) => `ran ${command}`,
    }),
  ]),
});
// This stand-in needs no tracing; with a real model, tracing is the SDK's own setting.
const runner = new Runner({ tracingDisabled: true });

try {
  const result = await withHookbusRun(
    { client, agentId: "support-bot", sessionKey: `conv-${Date.now()}` },
    () => runner.run(agent, "tidy up my project", { maxTurns: 4 }),
  );
  for (const item of result.newItems) {
    if (item.type !== "tool_call_output_item") continue;
    const { name } = item.rawItem as { name?: string };
    console.log(`${name ?? "?"}: ${String(item.output)}`);
  }
  console.log(`answer: ${String(result.finalOutput)}`);
} finally {
  await client.close();
  await nc.drain();
}
