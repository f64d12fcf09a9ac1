/**
 * Your agent on the Vercel AI SDK, protected by hookbus (`hookbus/ai`): the model is wrapped with
 * the middleware, the tools with hookbusTools, and each user turn runs inside withHookbusRun.
 *
 * The model below is a scripted stand-in (the AI SDK's own test model) that asks to run
 * `rm -rf /`, so this file runs offline: `npm run try`. Replace it with your provider's model,
 * e.g. `import { openai } from "@ai-sdk/openai"; const yourModel = openai("gpt-4.1");`.
 */
import { connect } from "@nats-io/transport-node";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { HookbusClient } from "hookbus";
import { hookbusMiddleware, hookbusTools, withHookbusRun } from "hookbus/ai";
import { z } from "zod";

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const script = [
  [
    { type: "tool-call" as const, toolCallId: "c1", toolName: "exec", input: '{"command":"ls"}' },
    {
      type: "tool-call" as const,
      toolCallId: "c2",
      toolName: "exec",
      input: '{"command":"rm -rf /"}',
    },
  ],
  [{ type: "text" as const, text: "Listed the files; the cleanup was refused." }],
];
const yourModel = new MockLanguageModelV4({
  doGenerate: () => {
    const content = script.shift() ?? [];
    const calls = content.some((part) => part.type === "tool-call");
    return Promise.resolve({
      content,
      finishReason: {
        unified: calls ? ("tool-calls" as const) : ("stop" as const),
        raw: undefined,
      },
      usage,
      warnings: [],
    });
  },
});

const nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:4222" });
const client = await HookbusClient.connect({
  nc,
  namespace: process.env.HOOKBUS_NAMESPACE ?? "hookbus",
});
// Created once, reused by every run: the run is found through withHookbusRun.
const model = wrapLanguageModel({ model: yourModel, middleware: hookbusMiddleware() });
const tools = hookbusTools({
  exec: tool({
    description: "Run a shell command",
    inputSchema: z.object({ command: z.string() }),
    execute: ({ command }) => `ran: ${command}`,
  }),
});

try {
  const result = await withHookbusRun(
    { client, agentId: "my-agent", sessionKey: `session-${Date.now()}` },
    () => generateText({ model, tools, prompt: "clean up the disk", stopWhen: stepCountIs(4) }),
  );
  for (const part of result.steps[0]?.content ?? []) {
    if (part.type === "tool-result") console.log(`${part.toolName}: ${String(part.output)}`);
    if (part.type === "tool-error") console.log(`${part.toolName}: refused: ${String(part.error)}`);
  }
  console.log(`answer: ${result.text}`);
} finally {
  await client.close();
  await nc.drain();
}
