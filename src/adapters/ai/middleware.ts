/**
 * The Vercel AI SDK language-model middleware: before_agent_reply (once per run),
 * before_llm_call, llm_input/llm_output, after_llm_call and (for the run's final text)
 * before_response_emit, for `generateText`, `streamText` and every step of their tool loops. Use
 * it with `wrapLanguageModel({ model, middleware: hookbusMiddleware() })` and wrap the tools with
 * `hookbusTools` (src/adapters/ai/tools.ts): the middleware decides, the tools wrapper enforces
 * at execution.
 *
 * - before_agent_reply (`transformParams`, the run's first LLM call, when the prompt ends with the
 *   user's message): a policy's reply is the call's answer (`wrapGenerate`/`wrapStream` return it
 *   as one text, or a stream of one text delta) and the model is never called.
 * - llm_input as the call is sent, llm_output as its answer arrived (a stream's at its `finish`
 *   part): observed, fire and forget.
 * - before_llm_call (`transformParams`): the prompt and the tools offered; a decision's
 *   messages, system prompt and tool narrowing are applied to the call. The run remembers which
 *   tools were offered: a call to a removed tool is still refused when executed.
 * - after_llm_call (`wrapGenerate`/`wrapStream`): asked with the model's tool calls before any of
 *   them can run. In a stream, tool-call parts are held until the decision arrived (the AI SDK
 *   starts a tool as soon as its part is read); the gate then blocks the calls it does not allow.
 * - before_response_emit: a step without tool calls is the run's final answer. Its text parts are
 *   held until the step ends (generate: the whole result; stream in the hold mode: the text
 *   deltas), then the decided text replaces them. In the edge mode (`stream`, below) a stream's
 *   text is shown as it comes through the edge's redactor (./stream-edge.ts) instead. What a stream shows: reasoning, tool-input and tool-call parts
 *   as they come (tool calls after the decision), and the text of each step only when the step
 *   ends, already decided; nothing of a refused final text is ever streamed. The text of a step
 *   that calls tools is not a final answer: it is released at the step's end as the model wrote
 *   it and counted in `allContent`.
 */
import type { LanguageModelMiddleware } from "ai";
import type { Decision } from "../../catalog/catalog.js";
import { askAfterLlmCall, decideLlmCall, parseToolArguments } from "../core/llm-call.js";
import { decideAgentReply, lastUserText } from "../core/agent-reply.js";
import { observeLlmInput, observeLlmOutput, type LlmUsage } from "../core/llm-observe.js";
import { decideResponse } from "../core/response.js";
import { requireHookbusRun, type HookbusRun } from "../core/run.js";
import { settleDenials } from "./approval.js";
import { EdgeRedaction } from "./stream-edge.js";
import { checkCadence, type StreamCadence, type StreamWindows } from "../core/stream-windows.js";
import {
  closeWindows,
  windowedParts,
  windowedText,
  windowedOf,
  windowsMode,
  type Windowed,
} from "./stream-windows.js";

type TransformParams = NonNullable<LanguageModelMiddleware["transformParams"]>;
type CallOptions = Parameters<TransformParams>[0]["params"];
type Model = Parameters<TransformParams>[0]["model"];
type WrapGenerate = NonNullable<LanguageModelMiddleware["wrapGenerate"]>;
type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
type Content = GenerateResult["content"][number];
type WrapStream = NonNullable<LanguageModelMiddleware["wrapStream"]>;
type StreamResult = Awaited<ReturnType<WrapStream>>;
type StreamPart = StreamResult["stream"] extends ReadableStream<infer P> ? P : never;
type Prompt = CallOptions["prompt"];
type PromptMessage = Prompt[number];
type ToolCallContent = Extract<Content, { type: "tool-call" }>;

export interface HookbusMiddlewareOptions {
  /**
   * Send before_response_emit for a step without tool calls (the final answer). Default true.
   * Turn it off when the final text is checked elsewhere.
   */
  responseEmit?: boolean;
  /**
   * What a `streamText` answer shows (docs/adapters/ai-sdk.md "What a stream shows"):
   * - `"edge"`: text and reasoning deltas as they come, through the edge's streaming redactor
   *   (secrets and emails never shown, even split across deltas); before_response_emit is still
   *   asked on the whole text at the step's end, and a block cuts the stream there;
   * - `"hold"`: each step's text only once the step ended, the final one as decided;
   * - `"auto"` (default): `"edge"` while no before_response_emit policy is registered (the
   *   client's fast path answers it), `"hold"` while one is, since a whole-answer policy can
   *   change what was already shown.
   */
  stream?: "auto" | "edge" | "hold";
  /**
   * How often a streamed answer's windows are asked while every before_response_emit policy
   * opted in (`stream: true`, the `"auto"` mode's third case; docs/streaming.md).
   */
  streamWindow?: StreamCadence;
}

/** A language-model middleware that routes every LLM call of a hookbus run through hookbus. */
export function hookbusMiddleware(options: HookbusMiddlewareOptions = {}): LanguageModelMiddleware {
  const responseEmit = options.responseEmit !== false;
  const streamMode = options.stream ?? "auto";
  const cadence = checkCadence(options.streamWindow);
  // The calls a policy's before_agent_reply answered: transformParams marks the params it
  // returns, and the wrap of the same call answers with the reply instead of calling the model.
  const replies = new WeakMap<CallOptions, string>();
  return {
    specificationVersion: "v4",
    transformParams: async ({ params, model }) => {
      const run = requireHookbusRun("hookbusMiddleware (transformParams)");
      // The app's denials of held calls reach hookbus here: the SDK hands them to the model.
      await settleDenials(run, params.prompt);
      const reply = await decideAgentReply(run, lastUserText(params.prompt));
      if (reply === undefined) return beforeLlmCall(run, params, model);
      const marked = { ...params };
      replies.set(marked, reply);
      return marked;
    },
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const run = requireHookbusRun("hookbusMiddleware (wrapGenerate)");
      const reply = replies.get(params);
      if (reply !== undefined) return replyResult(reply);
      observeLlmInput(run, { messages: params.prompt, ...modelFields(model) });
      const result = await doGenerate();
      observeGenerated(run, result, model);
      return { ...result, content: await decideContent(run, result.content, model, responseEmit) };
    },
    wrapStream: async ({ doStream, params, model }) => {
      // Captured now: stream callbacks may run outside the run's async context.
      const run = requireHookbusRun("hookbusMiddleware (wrapStream)");
      const reply = replies.get(params);
      if (reply !== undefined) return { stream: replyStream(reply) };
      observeLlmInput(run, { messages: params.prompt, ...modelFields(model) });
      const result = await doStream();
      return {
        ...result,
        stream: result.stream.pipeThrough(
          guardStep(run, model, responseEmit, {
            edge: edgeMode(run, streamMode, responseEmit),
            windows: windowsMode(run, streamMode, responseEmit, cadence),
          }),
        ),
      };
    },
  };
}

const NO_USAGE: GenerateResult["usage"] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/** A policy's reply as the model's whole answer: one text, no tool calls, no tokens used. */
function replyResult(text: string): GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: undefined },
    usage: NO_USAGE,
    warnings: [],
  };
}

/** A policy's reply as a model's stream: one text block, then the end of the step. */
function replyStream(text: string): ReadableStream<StreamPart> {
  const parts: StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "text-start", id: "hookbus-reply" },
    { type: "text-delta", id: "hookbus-reply", delta: text },
    { type: "text-end", id: "hookbus-reply" },
    { type: "finish", finishReason: { unified: "stop", raw: undefined }, usage: NO_USAGE },
  ];
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** The catalog's token counts of an AI SDK usage. */
function llmUsage(usage: GenerateResult["usage"]): LlmUsage {
  const { inputTokens, outputTokens } = usage;
  const total =
    inputTokens.total === undefined || outputTokens.total === undefined
      ? undefined
      : inputTokens.total + outputTokens.total;
  return {
    input: inputTokens.total,
    output: outputTokens.total,
    cacheRead: inputTokens.cacheRead,
    cacheWrite: inputTokens.cacheWrite,
    total,
  };
}

function observeGenerated(run: HookbusRun, result: GenerateResult, model: Model): void {
  const content = result.content;
  observeLlmOutput(run, {
    text: textOf(content),
    toolCalls: toolCallInputs(toolCallsOf(content)),
    usage: llmUsage(result.usage),
    ...modelFields(model),
  });
}

function modelFields(model: Model): { model: string; provider: string } {
  return { model: model.modelId, provider: model.provider };
}

async function beforeLlmCall(
  run: HookbusRun,
  params: CallOptions,
  model: Model,
): Promise<CallOptions> {
  const tools = params.tools ?? [];
  const { decision, offers } = await decideLlmCall(
    run,
    { messages: params.prompt, tools, ...modelFields(model) },
    tools.map((t) => t.name),
  );
  const next: CallOptions = { ...params };
  if (decision.messages !== undefined || decision.systemPrompt !== undefined) {
    next.prompt = rewritePrompt(params.prompt, decision);
  }
  const offered = tools.filter((t) => offers(t.name));
  if (params.tools !== undefined) next.tools = offered;
  const choice = params.toolChoice;
  if (choice?.type === "tool" && !offered.some((t) => t.name === choice.toolName)) {
    next.toolChoice = { type: "none" };
  } else if (choice?.type === "required" && offered.length === 0) {
    next.toolChoice = { type: "none" };
  }
  return next;
}

/**
 * The prompt a before_llm_call decision asks for. Its messages come from a policy, so they are
 * brought to the AI SDK's prompt shape: string content of user and assistant messages becomes
 * one text part (the provider layer accepts only parts there).
 */
function rewritePrompt(original: Prompt, decision: Decision<"before_llm_call">): Prompt {
  let prompt: Prompt =
    decision.messages === undefined ? original : decision.messages.map(toPromptMessage);
  if (decision.systemPrompt !== undefined) {
    prompt = prompt.filter((m) => m.role !== "system");
    if (decision.systemPrompt !== "") {
      prompt = [{ role: "system", content: decision.systemPrompt }, ...prompt];
    }
  }
  return prompt;
}

function toPromptMessage(message: Record<string, unknown>): PromptMessage {
  const { role, content } = message;
  if ((role === "user" || role === "assistant") && typeof content === "string") {
    const parts: PromptMessage = { role, content: [{ type: "text", text: content }] };
    return { ...message, ...parts };
  }
  // Anything else is passed on as the policy wrote it; the provider validates the prompt.
  return message as PromptMessage;
}

function toolCallsOf(content: readonly Content[]): ToolCallContent[] {
  return content.filter(
    (part): part is ToolCallContent => part.type === "tool-call" && part.providerExecuted !== true,
  );
}

/** The model's tool calls as hookbus events carry them. */
function toolCallInputs(calls: readonly ToolCallContent[]) {
  return calls.map((call) => ({
    id: call.toolCallId,
    name: call.toolName,
    arguments: parseToolArguments(call.input),
  }));
}

function textOf(content: readonly Content[]): string {
  return content
    .filter((p): p is Extract<Content, { type: "text" }> => p.type === "text")
    .map((p) => p.text)
    .join("");
}

/** Ask after_llm_call for these tool calls (see askAfterLlmCall in the core). */
function askAfterLlm(
  run: HookbusRun,
  calls: readonly ToolCallContent[],
  text: string,
  model: Model,
): Promise<unknown> {
  return askAfterLlmCall(run, {
    toolCalls: toolCallInputs(calls),
    ...(text === "" ? {} : { response: text }),
    ...modelFields(model),
  });
}

async function decideContent(
  run: HookbusRun,
  content: Content[],
  model: Model,
  responseEmit: boolean,
): Promise<Content[]> {
  const calls = toolCallsOf(content);
  const text = textOf(content);
  await askAfterLlm(run, calls, text, model);
  if (calls.length > 0 || !responseEmit || text === "") {
    if (text !== "") run.addText(text);
    return content;
  }
  const decided = await decideResponse(run, text);
  const out: Content[] = [];
  let placed = false;
  for (const part of content) {
    if (part.type !== "text") out.push(part);
    else if (!placed) {
      placed = true;
      out.push({ ...part, text: decided });
    }
  }
  return out;
}

/** The edge redaction for this step's stream, or none in the hold mode. */
function edgeMode(
  run: HookbusRun,
  mode: "auto" | "edge" | "hold",
  responseEmit: boolean,
): EdgeRedaction<StreamPart> | undefined {
  const edge =
    mode === "edge" ||
    (mode === "auto" && (!responseEmit || run.client.responseStreaming() !== "hold"));
  return edge ? new EdgeRedaction<StreamPart>() : undefined;
}

/**
 * The stream side: hold tool-call parts until the model's step ended and hookbus decided, then
 * release them. Text: in the hold mode held too and replaced by the decided final text when the
 * step has no tool calls; in the edge mode (`edge`) shown as it comes, redacted at the edge.
 */
function guardStep(
  run: HookbusRun,
  model: Model,
  responseEmit: boolean,
  mode: { edge: EdgeRedaction<StreamPart> | undefined; windows: StreamWindows | undefined },
): TransformStream<StreamPart, StreamPart> {
  const { edge } = mode;
  const windowed = windowedOf<StreamPart>(mode);
  const held: StreamPart[] = [];
  // Reasoning is shown as it comes in both modes, through the edge's redaction.
  const reasoning = edge ?? new EdgeRedaction<StreamPart>();
  const calls: ToolCallContent[] = [];
  let text = "";
  let usage: LlmUsage | undefined;
  let released = false;

  const release = async (controller: TransformStreamDefaultController<StreamPart>) => {
    if (released) return;
    released = true;
    if (windowed?.cut !== undefined) throw windowed.cut;
    const toolCalls = toolCallInputs(calls);
    observeLlmOutput(run, { text, toolCalls, usage, ...modelFields(model) });
    await askAfterLlm(run, calls, text, model);
    const step = { calls: calls.length, text, responseEmit };
    if (windowed !== undefined && calls.length === 0 && responseEmit && text !== "") {
      await windowed.windows.decideWhole(windowed.edge.shown);
      for (const part of held) controller.enqueue(part);
      return;
    }
    for (const part of await releasedParts(run, step, held, edge !== undefined)) {
      controller.enqueue(part);
    }
  };

  return new TransformStream<StreamPart, StreamPart>({
    async transform(part, controller) {
      if (windowed?.cut !== undefined) throw windowed.cut;
      if (part.type === "text-delta") text += part.delta;
      if (windowed !== undefined && windowedText(part)) {
        for (const out of await windowedParts(windowed, part, blockDelta)) controller.enqueue(out);
        return;
      }
      if (edge !== undefined && part.type !== "tool-call" && part.type !== "finish") {
        for (const out of edge.rewrite(part)) controller.enqueue(out);
        return;
      }
      switch (part.type) {
        case "reasoning-start":
        case "reasoning-delta":
        case "reasoning-end":
          for (const out of reasoning.rewrite(part)) controller.enqueue(out);
          return;
        case "text-start":
        case "text-delta":
        case "text-end":
          held.push(part);
          return;
        case "tool-call":
          if (part.providerExecuted === true) controller.enqueue(part);
          else {
            calls.push(part);
            held.push(part);
          }
          return;
        case "finish":
          usage = llmUsage(part.usage);
          for (const out of await flushed(windowed, edge ?? reasoning)) controller.enqueue(out);
          await release(controller);
          controller.enqueue(part);
          return;
        default:
          controller.enqueue(part);
      }
    },
    async flush(controller) {
      if (windowed?.cut !== undefined) throw windowed.cut;
      for (const out of await flushed(windowed, edge ?? reasoning)) controller.enqueue(out);
      await release(controller);
    },
  });
}

/**
 * What a step releases once after_llm_call decided: its held parts, with the text of a final
 * answer (no tool calls) replaced by the before_response_emit decision in the hold mode. In the
 * edge mode the text was already shown: the decision is asked and recorded, and only a block
 * still acts (it throws, which cuts the stream).
 */
async function releasedParts(
  run: HookbusRun,
  step: { calls: number; text: string; responseEmit: boolean },
  held: readonly StreamPart[],
  edge: boolean,
): Promise<readonly StreamPart[]> {
  const { calls, text, responseEmit } = step;
  if (calls > 0 || !responseEmit || text === "") {
    if (text !== "") run.addText(text);
    return held;
  }
  const decided = await decideResponse(run, text);
  if (edge) return held;
  // One text block carries the decided text; the model's own deltas are never shown.
  const out: StreamPart[] = [];
  let placed = false;
  for (const part of held) {
    if (part.type !== "text-delta") out.push(part);
    else if (!placed) out.push({ ...part, delta: decided });
    placed ||= part.type === "text-delta";
  }
  return out;
}

/**
 * What a stream that ends still holds: a window not yet asked (a text block without its end),
 * then what the edge holds back. A last window's block cuts here (it throws after its parts).
 */
async function flushed(
  windowed: Windowed<StreamPart> | undefined,
  edge: EdgeRedaction<StreamPart>,
): Promise<StreamPart[]> {
  const parts = windowed === undefined ? [] : await closeWindows(windowed, blockDelta);
  return [...parts, ...edge.flush(blockDelta)];
}

/** A delta carrying what a block still held back when its stream ended without the block's end. */
function blockDelta(kind: "text" | "reasoning", id: string, delta: string): StreamPart {
  return kind === "text"
    ? { type: "text-delta", id, delta }
    : { type: "reasoning-delta", id, delta };
}
