/**
 * hookbus in a pi agent (`hookbus/pi`, for `@mariozechner/pi-agent-core`): hookbus is attached
 * to the Agent once, and each user turn runs inside withHookbusRun. The model here is pi-ai's
 * own faux provider, scripted, so the program runs offline; use any pi model instead. With the project's
 * policies served (`npm run worker`): `npm run try`.
 */
import { Agent, type AgentTool } from "@mariozechner/pi-agent-core";
import {
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
  Type,
  type Context,
} from "@mariozechner/pi-ai";
import { connect } from "@nats-io/transport-node";
import { HookbusClient } from "hookbus";
import { attachHookbus, withHookbusRun } from "hookbus/pi";

// Turn 1 calls both tools (exec although it is not offered), turn 2 answers.
const standIn = registerFauxProvider();
const offered = (context: Context) =>
  console.log(`tools offered to the model: ${(context.tools ?? []).map((t) => t.name).join(", ")}`);
standIn.setResponses([
  (context) => {
    offered(context);
    return fauxAssistantMessage(
      [
        fauxToolCall("read_file", { path: "README.md" }, { id: "c1" }),
        fauxToolCall("exec", { command: "rm -rf /" }, { id: "c2" }),
      ],
      { stopReason: "toolUse" },
    );
  },
  (context) => {
    offered(context);
    return fauxAssistantMessage(fauxText("I read README.md; exec was refused."));
  },
]);

const readFileParams = Type.Object({ path: Type.String() });
const execParams = Type.Object({ command: Type.String() });
const readFile: AgentTool<typeof readFileParams> = {
  name: "read_file",
  label: "Read a file",
  description: "Read a file of the project",
  parameters: readFileParams,
  execute: (_id, { path }) =>
    Promise.resolve({ content: [{ type: "text", text: `ran read_file on ${path}` }], details: {} }),
};
const exec: AgentTool<typeof execParams> = {
  name: "exec",
  label: "Run a command",
  description: "Run a shell command",
  parameters: execParams,
  execute: (_id, { command }) =>
    Promise.resolve({ content: [{ type: "text", text: `ran ${command}` }], details: {} }),
};

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const client = await HookbusClient.connect({
  nc,
  namespace: process.env.HOOKBUS_NAMESPACE ?? "hookbus",
});
// Configured once; every run finds its agent, session and run through withHookbusRun.
const agent = new Agent({
  initialState: {
    model: standIn.getModel(),
    systemPrompt: "You tidy up projects.",
    tools: [readFile, exec],
  },
});
attachHookbus(agent);

try {
  await withHookbusRun({ client, agentId: "support-bot", sessionKey: `conv-${Date.now()}` }, () =>
    agent.prompt("tidy up my project"),
  );
  for (const message of agent.state.messages) {
    if (message.role !== "toolResult") continue;
    const text = message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    console.log(`${message.toolName}: ${message.isError ? "refused: " : ""}${text}`);
  }
  const answer = agent.state.messages.at(-1);
  if (agent.state.errorMessage !== undefined) console.log(`error: ${agent.state.errorMessage}`);
  else if (answer?.role === "assistant")
    console.log(`answer: ${answer.content.map((c) => (c.type === "text" ? c.text : "")).join("")}`);
} finally {
  standIn.unregister();
  await client.close();
  await nc.drain();
}
