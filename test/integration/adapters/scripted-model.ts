/**
 * A scripted language model for the AI SDK adapter tests, offline: the AI SDK's own
 * MockLanguageModelV4 (from `ai/test`), answering each call with the next scripted step, as a
 * whole result (generateText) or as stream parts (streamText). A step is text, tool calls, or both.
 */
import { wrapLanguageModel } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";
import { hookbusMiddleware } from "../../../src/adapters/ai/index.js";

export interface ScriptedCall {
  id: string;
  name: string;
  input: unknown;
}

export interface ScriptedStep {
  text?: string;
  calls?: ScriptedCall[];
}

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

function finishReason(step: ScriptedStep) {
  const toolCalls = (step.calls?.length ?? 0) > 0;
  return { unified: toolCalls ? ("tool-calls" as const) : ("stop" as const), raw: undefined };
}

function callPart(call: ScriptedCall) {
  return {
    type: "tool-call" as const,
    toolCallId: call.id,
    toolName: call.name,
    input: typeof call.input === "string" ? call.input : JSON.stringify(call.input),
  };
}

/**
 * A model that answers call N with `steps[N]` (past the end: an error, so a test that loops
 * further than scripted fails). `calls` records every call's options (prompt and tools).
 */
export function scriptedModel(steps: ScriptedStep[]) {
  let next = 0;
  const take = (): ScriptedStep => {
    const step = steps[next++];
    if (step === undefined) throw new Error(`the scripted model has only ${steps.length} steps`);
    return step;
  };
  return new MockLanguageModelV4({
    provider: "scripted",
    modelId: "scripted-1",
    doGenerate: () => {
      const step = take();
      return Promise.resolve({
        content: [
          ...(step.text === undefined ? [] : [{ type: "text" as const, text: step.text }]),
          ...(step.calls ?? []).map(callPart),
        ],
        finishReason: finishReason(step),
        usage,
        warnings: [],
      });
    },
    doStream: () => {
      const step = take();
      // The text in two deltas, so "what the stream shows" covers more than one chunk.
      const text = step.text ?? "";
      const half = Math.ceil(text.length / 2);
      return Promise.resolve({
        stream: convertArrayToReadableStream([
          { type: "stream-start" as const, warnings: [] },
          ...(text === ""
            ? []
            : [
                { type: "text-start" as const, id: "t1" },
                { type: "text-delta" as const, id: "t1", delta: text.slice(0, half) },
                { type: "text-delta" as const, id: "t1", delta: text.slice(half) },
                { type: "text-end" as const, id: "t1" },
              ]),
          ...(step.calls ?? []).map(callPart),
          { type: "finish" as const, finishReason: finishReason(step), usage },
        ]),
      });
    },
  });
}

/**
 * `scriptedModel(steps)` (`base`: its calls are `base.doGenerateCalls` and `base.doStreamCalls`)
 * wrapped in hookbus's middleware (`model`), as an app wires it.
 */
export function hookbusScriptedModel(steps: ScriptedStep[]) {
  const base = scriptedModel(steps);
  return { base, model: wrapLanguageModel({ model: base, middleware: hookbusMiddleware() }) };
}
