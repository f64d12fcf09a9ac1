/**
 * hookbus in a Vercel AI SDK agent (`hookbus/ai`): the model is wrapped with the middleware, the
 * tools with the tools wrapper, and each user turn runs inside withHookbusRun. The model here is
 * a scripted stand-in (the AI SDK's own test model) so the program runs offline; use any AI SDK
 * model instead. With examples/run-policy.ts serving no-shell:
 *   NATS_URL=nats://127.0.0.1:4222 npx tsx examples/ai-sdk.ts
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
// Step 1 calls both tools (exec although it is not offered), step 2 answers.
const steps = [
  [
    {
      type: "tool-call" as const,
      toolCallId: "c1",
      toolName: "read_file",
      input: '{"path":"README.md"}',
    },
    {
      type: "tool-call" as const,
      toolCallId: "c2",
      toolName: "exec",
      input: '{"command":"rm -rf /"}',
    },
  ],
  [{ type: "text" as const, text: "I read README.md; exec was refused." }],
];
const standIn = new MockLanguageModelV4({
  doGenerate: (options) => {
    const step = steps.shift() ?? [];
    console.log(
      `tools offered to the model: ${(options.tools ?? []).map((t) => t.name).join(", ")}`,
    );
    const calls = step.some((part) => part.type === "tool-call");
    return Promise.resolve({
      content: step,
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
// Created once, reused by every run and session: the run is found through withHookbusRun.
const model = wrapLanguageModel({ model: standIn, middleware: hookbusMiddleware() });
const tools = hookbusTools({
  read_file: tool({
    inputSchema: z.object({ path: z.string() }),
    execute: ({ path }) => `ran read_file on ${path}`,
  }),
  exec: tool({
    inputSchema: z.object({ command: z.string() }),
    execute: ({ command }) => `ran ${command}`,
  }),
});

try {
  const result = await withHookbusRun(
    { client, agentId: "support-bot", sessionKey: `conv-${Date.now()}` },
    () => generateText({ model, tools, prompt: "tidy up my project", stopWhen: stepCountIs(4) }),
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
