/**
 * The rest of the loop around an OpenAI Agents SDK model call: before_agent_reply's reply as the
 * model's answer (the model is never called), and the llm_input/llm_output observations.
 */
import type { AgentOutputItem, ModelRequest, ModelResponse, StreamEvent } from "@openai/agents";
import { decideAgentReply, lastUserText } from "../core/agent-reply.js";
import { observeLlmInput, observeLlmOutput } from "../core/llm-observe.js";
import { importPeer } from "../core/peer.js";
import type { HookbusRun } from "../core/run.js";
import { afterLlmCallFields, requestMessages } from "./items.js";

type ModelFields = { model?: string; provider?: string };

/** The response id of a policy's reply (the SDK's stream requires one). */
const REPLY_RESPONSE_ID = "hookbus-agent-reply";

/**
 * The reply a policy gives instead of this run's first LLM call, or undefined (see
 * decideAgentReply: asked once per run, when the run starts with the user's message).
 */
export function agentReply(run: HookbusRun, request: ModelRequest): Promise<string | undefined> {
  return decideAgentReply(run, lastUserText(requestMessages(request.input)));
}

function replyMessage(text: string): Extract<AgentOutputItem, { role: "assistant" }> {
  return {
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text }],
  };
}

/** A policy's reply as the model's whole response: one message, no tokens used. */
export async function replyResponse(text: string): Promise<ModelResponse> {
  const { Usage } = await importPeer(
    "@openai/agents",
    "hookbus/openai-agents",
    () => import("@openai/agents"),
  );
  return { usage: new Usage(), output: [replyMessage(text)], responseId: REPLY_RESPONSE_ID };
}

/** A policy's reply as a model's stream: started, the text, done. */
export function* replyStream(text: string): Generator<StreamEvent> {
  yield { type: "response_started" };
  yield { type: "output_text_delta", delta: text };
  yield {
    type: "response_done",
    response: {
      id: REPLY_RESPONSE_ID,
      usage: { requests: 0, inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      output: [replyMessage(text)],
    },
  };
}

/** llm_input for the request as it is sent (after before_llm_call decided). */
export function observeRequest(run: HookbusRun, request: ModelRequest, fields: ModelFields): void {
  observeLlmInput(run, {
    messages: requestMessages(request.input),
    systemPrompt: request.systemInstructions,
    ...fields,
  });
}

interface UsageCounts {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  totalTokens?: number | undefined;
}

/** llm_output for the model's response, as the model gave it. */
export function observeResponse(
  run: HookbusRun,
  output: readonly AgentOutputItem[],
  usage: UsageCounts | undefined,
  fields: ModelFields,
): void {
  const answer = afterLlmCallFields(output);
  observeLlmOutput(run, {
    text: answer.response ?? "",
    toolCalls: answer.toolCalls,
    usage:
      usage === undefined
        ? undefined
        : { input: usage.inputTokens, output: usage.outputTokens, total: usage.totalTokens },
    ...fields,
  });
}
