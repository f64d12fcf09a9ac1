/**
 * A loopback OpenAI-compatible model for OpenClaw (`api: "openai-completions"`): it answers
 * `POST /v1/chat/completions` from a script, one step per request, streaming (SSE) when asked,
 * and keeps every request body so a test can read what the model was shown (tool results).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export type ScriptedStep = { text: string } | { calls: ScriptedCall[] };

/** The bytes one request may carry (OpenClaw's prompt with its tool catalog is ~100 KiB). */
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;

export interface FakeOpenAi {
  baseUrl: string;
  /** Every chat-completions request body, in order. */
  requests: Record<string, unknown>[];
  /** Steps to answer, in order; past the end, the last is repeated. */
  script(steps: ScriptedStep[]): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        reject(new Error(`request over ${MAX_REQUEST_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function toolCalls(step: ScriptedStep) {
  if (!("calls" in step)) return undefined;
  return step.calls.map((c, index) => ({
    index,
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: JSON.stringify(c.input) },
  }));
}

function answer(res: ServerResponse, step: ScriptedStep, stream: boolean, n: number): void {
  const id = `chatcmpl-fake-${n}`;
  const calls = toolCalls(step);
  const finish = calls === undefined ? "stop" : "tool_calls";
  const text = "text" in step ? step.text : null;
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created: 1,
        model: "scripted",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: text, tool_calls: calls },
            finish_reason: finish,
          },
        ],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({
        id,
        object: "chat.completion.chunk",
        created: 1,
        model: "scripted",
        choices: [{ index: 0, delta, finish_reason: finishReason }],
      })}\n\n`,
    );
  chunk({ role: "assistant" });
  if (text !== null) chunk({ content: text });
  for (const call of calls ?? []) chunk({ tool_calls: [call] });
  chunk({}, finish);
  res.write("data: [DONE]\n\n");
  res.end();
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  let steps: ScriptedStep[] = [{ text: "(no script)" }];
  let served = 0;
  const requests: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    readBody(req).then(
      (body) => {
        if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
          return;
        }
        const parsed = JSON.parse(body) as Record<string, unknown>;
        requests.push(parsed);
        const step = steps[Math.min(served, steps.length - 1)]!;
        served += 1;
        answer(res, step, parsed.stream === true, served);
      },
      (error: Error) => {
        res.writeHead(413);
        res.end(error.message);
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script(next) {
      steps = next;
      served = 0;
      requests.length = 0;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Every tool result the model was shown in a request (OpenAI `role: "tool"` messages). */
export function toolResultsShown(
  request: Record<string, unknown> | undefined,
): Map<string, string> {
  const shown = new Map<string, string>();
  for (const m of (request?.messages ?? []) as {
    role?: string;
    tool_call_id?: string;
    content?: unknown;
  }[]) {
    if (m.role !== "tool" || m.tool_call_id === undefined) continue;
    shown.set(
      m.tool_call_id,
      typeof m.content === "string" ? m.content : JSON.stringify(m.content),
    );
  }
  return shown;
}
