/**
 * The OpenAI Agents SDK `Model` wrapper: before_agent_reply (once per run), before_llm_call,
 * llm_input/llm_output, after_llm_call and (for a final response) before_response_emit around
 * any Model, for `getResponse` and `getStreamedResponse`.
 *
 * - before_agent_reply: the run's first model call, when its input ends with the user's message;
 *   a policy's reply is the response (src/adapters/openai-agents/loop.ts) and the model is never
 *   called.
 * - llm_input as the request is sent, llm_output as the response arrived: observed, fire and
 *   forget.
 * - before_llm_call: the request's conversation (Responses-API items), instructions, tools and
 *   handoffs; a decision's messages, system prompt and tool narrowing are applied to the request
 *   (a tool choice that names a removed tool becomes "none"). The run remembers which tools were
 *   offered: a call to any other tool is refused when executed (src/adapters/openai-agents/tools.ts).
 * - after_llm_call: asked with the response's function calls before the SDK sees the response,
 *   so before any tool can start; the run's gate then blocks the calls it does not allow.
 * - before_response_emit: a response without function calls is the run's final answer; its text
 *   is replaced by the decided text (a block fails the run with HookbusBlockedError).
 *
 * What a stream shows depends on `stream` (docs/adapters/openai-agents.md). In the edge mode
 * (./stream-edge.ts) text deltas are shown as they come through the edge's redactor. In the hold
 * mode: `response_started` at once; every other event of a model response is
 * held until the response is complete and decided, then released in order. For a final
 * response whose text a policy changed, one `output_text_delta` carries the decided text and the
 * model's own text deltas and raw `model` events (which carry that text too) are dropped; a
 * blocked final response streams nothing of its text and the stream fails with the block.
 * A response that calls tools is released as the model produced it (its text is not a final
 * answer; it is counted in `allContent`).
 */
import type {
  AgentOutputItem,
  Model,
  ModelRequest,
  ModelResponse,
  StreamEvent,
} from "@openai/agents";
import { limitExceeded } from "../../foundation/limits.js";
import { askAfterLlmCall, decideLlmCall } from "../core/llm-call.js";
import { gateToolCall, toolResultText } from "../core/tool-call.js";
import { denyToolApproval } from "../core/approval.js";
import { OPENAI_AGENTS_FROM } from "./tools.js";
import { decideResponse } from "../core/response.js";
import { agentReply, observeRequest, observeResponse, replyResponse, replyStream } from "./loop.js";
import { requireHookbusRun, type HookbusRun } from "../core/run.js";
import { edgeStream, useEdge, useWindows, type ResponseUsage } from "./stream-edge.js";
import type { StreamCadence, StreamWindows } from "../core/stream-windows.js";
import {
  afterLlmCallFields,
  functionCalls,
  decidedRequest,
  offeredTools,
  requestMessages,
  toolCallRef,
  withOutputText,
} from "./items.js";

/** Stream events one model response may hold back until it is decided. */
export const MAX_HELD_STREAM_EVENTS = 100_000;

export interface HookbusModelOptions {
  /** The model's name in the LLM hooks' events (the SDK's Model interface has none). */
  name?: string;
  /** The provider's name in the LLM hooks' events. */
  provider?: string;
  /**
   * Send before_response_emit for a response without function calls (the final answer).
   * Default true; turn it off when the final text is checked elsewhere.
   */
  responseEmit?: boolean;
  /**
   * What a streamed run shows: `"edge"` text deltas as they come, through the edge's streaming
   * redactor (before_response_emit still asked on the whole text; its block fails the stream);
   * `"hold"` each response only once complete and decided; `"auto"` (default) `"edge"` while no
   * before_response_emit policy is registered, windows while every one is registered
   * `stream: true` (docs/streaming.md), `"hold"` while any other is.
   */
  stream?: "auto" | "edge" | "hold";
  /** How often a streamed answer's windows are asked (docs/streaming.md "Cadence"). */
  streamWindow?: StreamCadence;
}

interface DecidedOutput {
  output: AgentOutputItem[];
  /** The decided final text, when a policy changed it. */
  changedText: string | undefined;
}

/** The same model, every call of a hookbus run routed through hookbus. */
export function hookbusModel(model: Model, options: HookbusModelOptions = {}): Model {
  return new HookbusModel(model, options);
}

class HookbusModel implements Model {
  readonly getRetryAdvice?: Model["getRetryAdvice"];
  private readonly modelFields: { model?: string; provider?: string };

  constructor(
    private readonly inner: Model,
    private readonly options: HookbusModelOptions,
  ) {
    this.modelFields = {
      ...(options.name === undefined ? {} : { model: options.name }),
      ...(options.provider === undefined ? {} : { provider: options.provider }),
    };
    // Only when the wrapped model has one: the method is optional in the Model interface.
    if (inner.getRetryAdvice !== undefined) {
      this.getRetryAdvice = (args) => inner.getRetryAdvice?.(args);
    }
  }

  get supportsPromptModelSelection(): boolean | undefined {
    return this.inner.supportsPromptModelSelection;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const run = requireHookbusRun("hookbusModel (getResponse)");
    const reply = await agentReply(run, request);
    if (reply !== undefined) return replyResponse(reply);
    const sent = await this.beforeLlmCall(run, request);
    observeRequest(run, sent, this.modelFields);
    const response = await this.inner.getResponse(sent);
    observeResponse(run, response.output, response.usage, this.modelFields);
    const decided = await this.decideOutput(run, response.output, handoffNames(request));
    return decided.changedText === undefined ? response : { ...response, output: decided.output };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    // Captured now, before the first event: the stream is the run's for its whole life.
    const run = requireHookbusRun("hookbusModel (getStreamedResponse)");
    const reply = await agentReply(run, request);
    if (reply !== undefined) {
      yield* replyStream(reply);
      return;
    }
    const sent = await this.beforeLlmCall(run, request);
    observeRequest(run, sent, this.modelFields);
    if (useEdge(run, this.options)) {
      const windows = useWindows(run, this.options);
      // A rewrite of text already shown cannot be applied: only a block still acts (it throws).
      const decide = async (output: AgentOutputItem[], usage: ResponseUsage, shown: string) => {
        observeResponse(run, output, usage, this.modelFields);
        const streamed = windows === undefined ? undefined : { windows, shown };
        await this.decideOutput(run, output, handoffNames(request), streamed);
      };
      yield* edgeStream(this.inner.getStreamedResponse(sent), decide, windows);
      return;
    }
    const held: StreamEvent[] = [];
    for await (const event of this.inner.getStreamedResponse(sent)) {
      if (event.type === "response_started") {
        yield event;
      } else if (event.type !== "response_done") {
        if (held.length >= MAX_HELD_STREAM_EVENTS) {
          throw limitExceeded(
            "heldStreamEvents",
            `a model response streamed more than ${MAX_HELD_STREAM_EVENTS} events before it was complete`,
            { max: MAX_HELD_STREAM_EVENTS },
          );
        }
        held.push(event);
      } else {
        // The stream's items are the same Responses-API items, typed by another schema.
        const output = event.response.output as AgentOutputItem[];
        observeResponse(run, output, event.response.usage, this.modelFields);
        const decided = await this.decideOutput(run, output, handoffNames(request));
        yield* released(held, decided.changedText);
        held.length = 0;
        yield decided.changedText === undefined
          ? event
          : {
              ...event,
              response: {
                ...event.response,
                output: decided.output as typeof event.response.output,
              },
            };
      }
    }
    // Events of a response that never completed were never decided: they are not released.
  }

  private async beforeLlmCall(run: HookbusRun, request: ModelRequest): Promise<ModelRequest> {
    // A resumed run's first LLM call carries the outputs of the calls the app answered.
    if (run.llmCalls === 0) await settleRejections(run, request.input);
    const tools = offeredTools(request);
    const decided = await decideLlmCall(
      run,
      {
        messages: requestMessages(request.input),
        ...(request.systemInstructions === undefined
          ? {}
          : { systemPrompt: request.systemInstructions }),
        tools,
        ...this.modelFields,
      },
      tools.map((tool) => tool.name),
    );
    return decidedRequest(request, decided);
  }

  private async decideOutput(
    run: HookbusRun,
    output: AgentOutputItem[],
    handoffs: ReadonlySet<string>,
    streamed?: { windows: StreamWindows; shown: string },
  ): Promise<DecidedOutput> {
    const fields = afterLlmCallFields(output);
    await askAfterLlmCall(run, { ...fields, ...this.modelFields });
    await checkHandoffs(run, output, handoffs);
    const text = fields.response ?? "";
    const final = fields.toolCalls.length === 0 && this.options.responseEmit !== false;
    if (!final || text === "") {
      if (text !== "") run.addText(text);
      return { output, changedText: undefined };
    }
    if (streamed !== undefined) {
      // Shown window by window: the whole answer is decided and recorded with what was shown.
      await streamed.windows.decideWhole(streamed.shown);
      return { output, changedText: undefined };
    }
    const decided = await decideResponse(run, text);
    return decided === text
      ? { output, changedText: undefined }
      : { output: withOutputText(output, decided), changedText: decided };
  }
}

/**
 * The app rejected held calls in the SDK (`state.reject()`), which then never runs them: their
 * outputs (the rejection message) end the resumed run's input. Each such call's hookbus request
 * is settled as denied with that message; outputs of calls hookbus did not hold, or whose request
 * is settled already (the approved ones that just ran), leave their requests as they are.
 */
async function settleRejections(run: HookbusRun, input: ModelRequest["input"]): Promise<void> {
  if (run.approvals === undefined || typeof input === "string") return;
  for (const item of trailingToolOutputs(input)) {
    await denyToolApproval(run, item.callId, outputText(item.output), OPENAI_AGENTS_FROM);
  }
}

interface ToolOutputItem {
  callId: string;
  output: unknown;
}

/** The function call outputs after the input's last item that is not a function call or output. */
function trailingToolOutputs(input: readonly unknown[]): ToolOutputItem[] {
  const outputs: ToolOutputItem[] = [];
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { type?: string; callId?: unknown; output?: unknown };
    if (item.type === "function_call") continue;
    if (item.type !== "function_call_result" && item.type !== "function_call_output") break;
    if (typeof item.callId === "string") outputs.push({ callId: item.callId, output: item.output });
  }
  return outputs;
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  const text = (output as { text?: unknown } | undefined)?.text;
  return typeof text === "string" ? text : toolResultText(output);
}

function handoffNames(request: ModelRequest): Set<string> {
  return new Set(request.handoffs.map((handoff) => handoff.toolName));
}

/**
 * A handoff is a function call the SDK carries out itself, not through a tool: it never reaches
 * hookbusTool's gates. Each one asks them here (offered tools, the after_llm_call gate,
 * before_tool_call) before the SDK sees the response; a refused handoff fails the run with the
 * refusal (the SDK has no way to report it to the model).
 */
async function checkHandoffs(
  run: HookbusRun,
  output: readonly AgentOutputItem[],
  handoffs: ReadonlySet<string>,
): Promise<void> {
  const calls = functionCalls(output).filter((call) => handoffs.has(call.name));
  await Promise.all(calls.map((call) => gateToolCall(run, toolCallRef(call))));
}

/**
 * The held events of a decided response. When the final text changed, one text delta carries
 * the decided text; the model's own deltas and raw events (which carry its text) are dropped.
 */
function* released(held: readonly StreamEvent[], changedText: string | undefined) {
  if (changedText === undefined) {
    yield* held;
    return;
  }
  let placed = false;
  for (const event of held) {
    if (event.type === "model") continue;
    if (event.type !== "output_text_delta") yield event;
    else if (!placed) {
      placed = true;
      yield { ...event, delta: changedText };
    }
  }
}
