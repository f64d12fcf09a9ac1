/**
 * The model side of `hookbus/pi`: a wrapped `streamFn` that puts every LLM call of a pi agent
 * through before_llm_call, after_llm_call and (for the final answer) before_response_emit,
 * observes it (llm_input, llm_output), and asks before_agent_reply where pi's loop starts.
 *
 * - before_agent_reply: the run's first LLM call, when the context ends with the user's message
 *   (`agent.prompt`); a policy's reply is pi's finished message and the model is never called.
 * - before_llm_call: the context pi sends (messages, system prompt, tools). A decision's
 *   messages and system prompt replace the context's; tool narrowing filters the tools offered.
 *   The run remembers what was offered: pi executes any tool of the agent the model calls, so a
 *   call to a removed tool is refused at `beforeToolCall` (src/adapters/pi/tools.ts).
 * - after_llm_call: the finished assistant message. It is asked before pi sees the message, so
 *   the tool calls pi then runs (in parallel or not) wait at the gate for the decision.
 * - before_response_emit: an assistant message without tool calls is the run's final answer; its
 *   text is replaced by the decided text.
 *
 * What a stream shows: pi's events carry the whole partial message, so any forwarded update
 * would show text hookbus has not decided yet. The model's stream is therefore read to its end
 * here and pi gets one finished, decided message: subscribers see `message_start` and
 * `message_end` with the decided text and no `message_update` deltas. A refused answer (or a
 * model failure) arrives as pi's error message (`stopReason: "error"`, `errorMessage` with the
 * hookbus code) with no content: nothing of it was ever shown.
 */
import { checkCadence, type StreamCadence, type StreamWindows } from "../core/stream-windows.js";
import { piWindows, windowedEvents } from "./stream-windows.js";
import type { StreamFn } from "@mariozechner/pi-agent-core";
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageEventStream,
  Context,
  Message,
  Model,
  ToolCall,
} from "@mariozechner/pi-ai";
import type { Decision } from "../../catalog/catalog.js";
import { toolDefinitionName } from "../../catalog/common.js";
import { isHookbusError } from "../../foundation/errors.js";
import { decideAgentReply, lastUserText } from "../core/agent-reply.js";
import { askHook } from "../core/decide.js";
import { decideAfterLlmCall } from "../core/llm-call.js";
import { observeLlmInput, observeLlmOutput, type LlmUsage } from "../core/llm-observe.js";
import { importPeer } from "../core/peer.js";
import { decideResponse } from "../core/response.js";
import { currentHookbusRun, requireHookbusRun, type HookbusRun } from "../core/run.js";
import { PiEdge } from "./stream-edge.js";

type Terminal = Extract<AssistantMessageEvent, { type: "done" } | { type: "error" }>;
type AnyModel = Model<string>;

/** pi-ai builds the stream pi reads: loaded on first use, HOOKBUS_MISSING_PEER without it. */
function loadPiAi() {
  return importPeer("@mariozechner/pi-ai", "hookbus/pi", () => import("@mariozechner/pi-ai"));
}

export type PiStreamMode = "auto" | "edge" | "hold";

/** `inner` with every call routed through hookbus within the current run. */
export function hookbusStreamFn(
  inner: StreamFn,
  responseEmit: boolean,
  mode: PiStreamMode = "auto",
  streamWindow?: StreamCadence,
): StreamFn {
  const cadence = checkCadence(streamWindow);
  return async (model, context, options) => {
    // The one failure that cannot be told through a stream: there is no stream without pi-ai.
    const { createAssistantMessageEventStream } = await loadPiAi();
    const stream: AssistantMessageEventStream = createAssistantMessageEventStream();
    const edge = edgeMode(mode, responseEmit) ? new PiEdge() : undefined;
    const windows = piWindows(currentHookbusRun(), mode === "auto", responseEmit, cadence);
    const finished = (async () => {
      let terminal: Terminal;
      try {
        const forward = (event: AssistantMessageEvent) => stream.push(event);
        const shown = edge === undefined ? undefined : { edge, forward, windows };
        terminal = await decidedCall(inner, model, context, options, responseEmit, shown);
      } catch (error) {
        terminal = failure(model, error, options?.signal?.aborted === true);
      }
      stream.push(terminal);
      stream.end();
    })();
    // The hold mode answers with the finished stream; the edge mode streams while it decides.
    if (edge === undefined) await finished;
    return stream;
  };
}

/** Whether this call streams in the edge mode (docs/adapters/pi.md "What a stream shows"). */
function edgeMode(mode: PiStreamMode, responseEmit: boolean): boolean {
  if (mode !== "auto") return mode === "edge";
  const run = currentHookbusRun();
  return run !== undefined && (!responseEmit || run.client.responseStreaming() !== "hold");
}

interface EdgeForward {
  edge: PiEdge;
  forward: (event: AssistantMessageEvent) => void;
  /** The windows mode: text passes the opted-in policies' windows before the edge. */
  windows?: StreamWindows | undefined;
}

async function decidedCall(
  inner: StreamFn,
  model: AnyModel,
  context: Context,
  options: Parameters<StreamFn>[2],
  responseEmit: boolean,
  shown?: EdgeForward,
): Promise<Terminal> {
  const run = requireHookbusRun("hookbus/pi (streamFn)");
  // pi's loop starts with this call: a policy's reply answers instead of the model.
  const reply = await decideAgentReply(run, lastUserText(context.messages));
  if (reply !== undefined) return replyTerminal(model, reply);
  const iteration = run.llmCalls++;
  const fields = { model: model.id, provider: model.provider };
  const sent = await beforeLlmCall(run, model, context, iteration);
  observeLlmInput(run, { messages: sent.messages, systemPrompt: sent.systemPrompt, ...fields });
  const terminal = await finalEvent(await inner(model, sent, options), shown);
  // A failed or aborted answer ends pi's loop; its partial text was never checked.
  if (terminal.type === "error") return { ...terminal, error: { ...terminal.error, content: [] } };

  const message = terminal.message;
  const calls = message.content.filter((block): block is ToolCall => block.type === "toolCall");
  const toolCalls = calls.map((call) => ({
    id: call.id,
    name: call.name,
    arguments: call.arguments,
  }));
  const text = textOf(message);
  observeLlmOutput(run, { text, toolCalls, usage: llmUsage(message.usage), ...fields });
  await decideAfterLlmCall(run, {
    toolCalls,
    ...(text === "" ? {} : { response: text }),
    ...fields,
    iteration,
  });
  if (calls.length > 0 || !responseEmit || text === "") {
    if (text !== "") run.addText(text);
    return shown === undefined ? terminal : { ...terminal, message: withShown(message, shown) };
  }
  if (shown?.windows !== undefined) {
    // Shown window by window: the whole answer is decided and recorded with what was shown.
    await shown.windows.decideWhole(shown.edge.shownText);
    return { ...terminal, message: withShown(message, shown) };
  }
  const decided = await decideResponse(run, text);
  // In the edge mode the text was shown already: only a block (thrown above) still acts.
  if (shown !== undefined) return { ...terminal, message: withShown(message, shown) };
  return { ...terminal, message: withText(message, decided) };
}

async function beforeLlmCall(
  run: HookbusRun,
  model: AnyModel,
  context: Context,
  iteration: number,
): Promise<Context> {
  const tools = context.tools ?? [];
  // The offered set is known before the call is asked: a failed call offers nothing.
  run.offeredTools = new Set();
  const decision = await askHook(run, "before_llm_call", run.context, {
    messages: context.messages,
    ...(context.systemPrompt === undefined ? {} : { systemPrompt: context.systemPrompt }),
    tools: tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters,
    })),
    model: model.id,
    provider: model.provider,
    iteration,
  });
  const next: Context = { ...context };
  if (decision.messages !== undefined) next.messages = decision.messages.map(toPiMessage);
  if (decision.systemPrompt !== undefined) next.systemPrompt = decision.systemPrompt;
  const allowed = allowedNames(decision);
  const offered = allowed === undefined ? tools : tools.filter((t) => allowed.has(t.name));
  if (context.tools !== undefined) next.tools = offered;
  run.offeredTools = new Set(offered.map((t) => t.name));
  return next;
}

function allowedNames(decision: Decision<"before_llm_call">): Set<string> | undefined {
  return decision.tools === undefined ? undefined : new Set(decision.tools.map(toolDefinitionName));
}

/**
 * A policy's message in pi's shape: an assistant's string content becomes one text block (pi's
 * providers read assistant content as blocks); anything else is passed on as the policy wrote it.
 */
function toPiMessage(message: Record<string, unknown>): Message {
  const { role, content } = message;
  const blocks = role === "assistant" && typeof content === "string";
  return {
    timestamp: Date.now(),
    ...message,
    ...(blocks ? { content: [{ type: "text", text: content }] } : {}),
  } as Message;
}

/**
 * The model stream's final event (done or error), read to the end; nothing is kept but it. In
 * the edge mode (`shown`) its text and thinking deltas are forwarded on the way, redacted.
 */
async function finalEvent(
  stream: AssistantMessageEventStream,
  shown?: EdgeForward,
): Promise<Terminal> {
  for await (const event of stream) {
    if (event.type === "done" || event.type === "error") {
      for (const out of shown?.edge.flush() ?? []) shown?.forward(out);
      return event;
    }
    if (shown?.windows !== undefined) {
      await windowedEvents(shown.windows, shown.edge, event, shown.forward);
    } else for (const out of shown?.edge.rewrite(event) ?? []) shown?.forward(out);
  }
  throw new Error("the model's stream ended without a final message");
}

/** The finished message with the text the user was shown (the edge mode). */
function withShown(message: AssistantMessage, shown: EdgeForward): AssistantMessage {
  return textOf(message) === "" ? message : withText(message, shown.edge.shownText);
}

function textOf(message: AssistantMessage): string {
  return message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** The message with its text blocks replaced by one block carrying `text` (where the first was). */
function withText(message: AssistantMessage, text: string): AssistantMessage {
  let placed = false;
  const content: AssistantMessage["content"] = [];
  for (const block of message.content) {
    if (block.type !== "text") content.push(block);
    else if (!placed) {
      placed = true;
      content.push({ ...block, text });
    }
  }
  return { ...message, content };
}

const EMPTY_USAGE: AssistantMessage["usage"] = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** pi's token counts as the catalog's `usage` has them. */
function llmUsage(usage: AssistantMessage["usage"]): LlmUsage {
  return {
    input: usage.input,
    output: usage.output,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    total: usage.totalTokens,
  };
}

/** A policy's reply as pi's finished assistant message: the model was not called. */
function replyTerminal(model: AnyModel, text: string): Terminal {
  return {
    type: "done",
    reason: "stop",
    message: {
      role: "assistant",
      content: [{ type: "text", text }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: EMPTY_USAGE,
      stopReason: "stop",
      timestamp: Date.now(),
    },
  };
}

/** What pi is told when hookbus refused or could not decide: its own error message shape. */
export function describeError(error: unknown): string {
  if (isHookbusError(error)) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

function failure(model: AnyModel, error: unknown, aborted: boolean): Terminal {
  const reason = aborted ? "aborted" : "error";
  return {
    type: "error",
    reason,
    error: {
      role: "assistant",
      content: [],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: EMPTY_USAGE,
      stopReason: reason,
      errorMessage: describeError(error),
      timestamp: Date.now(),
    },
  };
}
