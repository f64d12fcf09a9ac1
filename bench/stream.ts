/**
 * `npm run bench:stream`: what guarding a streamed answer costs (issue 34, item 5). A scripted
 * model streams a 2,000-token answer, one token per delta at a fixed pace, with secrets and
 * email addresses at random offsets (a seeded PRNG: every run streams the same answer). It is
 * read through `streamText` three ways, runs interleaved:
 * - unguarded: the model as is;
 * - edge: `hookbusMiddleware` with no before_response_emit policy (redaction at the edge only);
 * - windows: one before_response_emit policy registered with `stream: true` (a coordinator and a
 *   worker on the local NATS), asked every window.
 * It prints the windows figures first, then the LAST line, the one to read:
 *   stream: ttft_overhead_ms=… hold_back_chars=… throughput_ratio=… leaked=0
 * ttft_overhead_ms: p50 time to first token of the edge runs minus the unguarded runs';
 * throughput_ratio: p50 tokens per second, edge / unguarded; leaked: secrets or emails (either
 * half of one) seen in any guarded run's text. `RUNS=N` (default 15) runs per way.
 */
import { streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { connect } from "@nats-io/transport-node";
import { findNatsServer } from "../src/testing/nats.js";
import { HookbusClient } from "../src/agent/index.js";
import { startCoordinator } from "../src/coordinator/index.js";
import { Subjects } from "../src/bus/subjects.js";
import { RegistryStore } from "../src/registry/store.js";
import { runPolicy } from "../src/worker/index.js";
import { definePolicy } from "../src/index.js";
import { hookbusMiddleware, withHookbusRun } from "../src/adapters/ai/index.js";
import { edgeRedactor } from "../src/redact-stream/index.js";
import { WINDOW_CHARS } from "../src/adapters/core/stream-windows.js";

const RUNS = Number(process.env.RUNS ?? 15);
const TOKENS = 2000;
/** The scripted model's pace: a token every 0.25 ms (4,000 tokens/s, faster than any model). */
const TOKEN_INTERVAL_MS = 0.25;

/** mulberry32: a small seeded PRNG, so every run streams the same answer. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ["the", "plan", "is", "to", "move", "data", "before", "noon", "and", "check", "it"];

function alnum(random: () => number, n: number): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from({ length: n }, () => chars[Math.floor(random() * chars.length)]).join("");
}

/** The answer's tokens, and the secrets and emails planted in it. */
function scriptedAnswer(): { tokens: string[]; planted: string[] } {
  const random = prng(34);
  const planted: string[] = [];
  const tokens: string[] = [];
  while (tokens.length < TOKENS) {
    const roll = random();
    if (roll < 0.01) {
      const secret = random() < 0.5 ? `sk-proj-${alnum(random, 40)}` : `ghp_${alnum(random, 36)}`;
      planted.push(secret);
      // A secret arrives split across several deltas, at random cuts.
      const cut1 = 1 + Math.floor(random() * (secret.length - 2));
      const cut2 = cut1 + Math.floor(random() * (secret.length - cut1));
      tokens.push(` ${secret.slice(0, cut1)}`, secret.slice(cut1, cut2), secret.slice(cut2));
    } else if (roll < 0.02) {
      const email = `${alnum(random, 6).toLowerCase()}@example.com`;
      planted.push(email);
      const cut = 1 + Math.floor(random() * (email.length - 2));
      tokens.push(` ${email.slice(0, cut)}`, email.slice(cut));
    } else {
      tokens.push(` ${WORDS[Math.floor(random() * WORDS.length)]}`);
    }
  }
  return { tokens: tokens.slice(0, TOKENS), planted };
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: TOKENS, text: TOKENS, reasoning: undefined },
};

/** A model streaming `tokens` at the fixed pace, from the moment it is called. */
function scriptedModel(tokens: readonly string[]) {
  return new MockLanguageModelV4({
    provider: "scripted",
    modelId: "bench-stream",
    doStream: () => {
      const parts = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t1" },
        ...tokens.map((delta) => ({ type: "text-delta", id: "t1", delta })),
        { type: "text-end", id: "t1" },
        { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage },
      ];
      const start = performance.now();
      let next = 0;
      const stream = new ReadableStream({
        async pull(controller) {
          const due = start + Math.max(0, next - 2) * TOKEN_INTERVAL_MS;
          const wait = due - performance.now();
          if (wait >= 1) await new Promise((resolve) => setTimeout(resolve, wait));
          const part = parts[next++];
          if (part === undefined) controller.close();
          else controller.enqueue(part);
        },
      });
      return Promise.resolve({ stream } as never);
    },
  });
}

interface Run {
  ttftMs: number;
  tokensPerS: number;
  text: string;
}

async function readStream(model: Parameters<typeof streamText>[0]["model"]): Promise<Run> {
  const start = performance.now();
  const result = streamText({ model, prompt: "plan?" });
  let ttftMs = -1;
  let text = "";
  for await (const chunk of result.textStream) {
    if (ttftMs < 0 && chunk !== "") ttftMs = performance.now() - start;
    text += chunk;
  }
  return { ttftMs, tokensPerS: TOKENS / ((performance.now() - start) / 1000), text };
}

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function leaks(text: string, planted: readonly string[]): number {
  return planted.filter((value) => {
    const half = Math.floor(value.length / 2);
    return text.includes(value.slice(0, half)) || text.includes(value.slice(half));
  }).length;
}

async function guardedClient(url: string, streaming: boolean) {
  const namespace = `bstream${streaming ? "w" : "e"}${Date.now()}`;
  const nc = await connect({ servers: url });
  const store = await RegistryStore.open(nc, new Subjects(namespace));
  const allowWindows = definePolicy({
    name: "allow-windows",
    hooks: { before_response_emit: () => undefined },
  });
  await store.apply({
    policies: streaming
      ? [{ name: "allow-windows", hooks: ["before_response_emit"], priority: 100, stream: true }]
      : [{ name: "tools-only", hooks: ["before_tool_call"], priority: 100 }],
  });
  const coordinator = await startCoordinator({
    nc: await connect({ servers: url }),
    namespace,
    id: "bench-stream",
  });
  const runner = streaming
    ? await runPolicy([allowWindows], { nc: await connect({ servers: url }), namespace })
    : undefined;
  const client = await HookbusClient.connect({ nc: await connect({ servers: url }), namespace });
  return {
    client,
    stop: async () => {
      await client.close();
      await runner?.stop();
      await coordinator.stop();
      await nc.close();
    },
  };
}

async function main(): Promise<void> {
  const server = await findNatsServer();
  const { tokens, planted } = scriptedAnswer();
  const edge = await guardedClient(server.url, false);
  const windows = await guardedClient(server.url, true);
  const guarded = (client: HookbusClient, session: string) =>
    withHookbusRun({ client, agentId: "bench", sessionKey: session }, () =>
      readStream(
        wrapLanguageModel({ model: scriptedModel(tokens), middleware: hookbusMiddleware() }),
      ),
    );
  const runs = { bare: [] as Run[], edge: [] as Run[], windows: [] as Run[] };
  for (let i = -2; i < RUNS; i++) {
    // Two warm-up rounds, not counted.
    const bare = await readStream(scriptedModel(tokens));
    const withEdge = await guarded(edge.client, `e${i}`);
    const withWindows = await guarded(windows.client, `w${i}`);
    if (i < 0) continue;
    runs.bare.push(bare);
    runs.edge.push(withEdge);
    runs.windows.push(withWindows);
  }
  await edge.stop();
  await windows.stop();
  const leaked = leaks([...runs.edge, ...runs.windows].map((r) => r.text).join("\n"), planted);
  const bareLeaks = leaks(runs.bare[0]!.text, planted);
  const ttft = (rs: Run[]) => p50(rs.map((r) => r.ttftMs));
  const rate = (rs: Run[]) => p50(rs.map((r) => r.tokensPerS));
  // The first token with windows: the first window's characters at the model's pace, plus one
  // round trip; "within one window" is this figure below the time the model takes to write one.
  const windowMs = (WINDOW_CHARS.default / (tokens.join("").length / TOKENS)) * TOKEN_INTERVAL_MS;
  console.log(
    `stream-windows: ttft_ms=${ttft(runs.windows).toFixed(2)} window_chars=${WINDOW_CHARS.default} window_ms_at_model_pace=${windowMs.toFixed(2)} throughput_ratio=${(rate(runs.windows) / rate(runs.bare)).toFixed(3)}`,
  );
  console.log(
    `stream-detail: runs=${RUNS} tokens=${TOKENS} planted=${planted.length} unguarded_leaks=${bareLeaks} ttft_bare_ms=${ttft(runs.bare).toFixed(2)} ttft_edge_ms=${ttft(runs.edge).toFixed(2)} tps_bare=${rate(runs.bare).toFixed(0)} tps_edge=${rate(runs.edge).toFixed(0)}`,
  );
  console.log(
    `stream: ttft_overhead_ms=${(ttft(runs.edge) - ttft(runs.bare)).toFixed(2)} hold_back_chars=${edgeRedactor().holdBack} throughput_ratio=${(rate(runs.edge) / rate(runs.bare)).toFixed(3)} leaked=${leaked}`,
  );
}

await main();
process.exit(0);
