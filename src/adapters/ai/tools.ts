/**
 * The Vercel AI SDK tools wrapper: every tool with an `execute` goes through the tool gates
 * (offered tools, the after_llm_call gate, before_tool_call with params rewriting),
 * before_tool_result and the after_tool_call observation (src/adapters/core/tool-call.ts).
 *
 * A block is thrown from `execute`: the AI SDK reports it to the model as the tool's error
 * result (a `tool-error` part) and the loop goes on, so the model reads why. The tool never ran.
 *
 * A tool whose `execute` returns an async iterable (preliminary results) is drained here and
 * only its last value is returned: before_tool_result must see the result the model will get,
 * and preliminary values would reach the caller unchecked. Tools without `execute` (answered by
 * the client) are returned unchanged: they never run in this process.
 *
 * With `toolApproval: hookbusToolApproval()` a call the approval step decided is not asked again
 * here: the execution uses that decision (src/adapters/ai/approval.ts).
 */
import type { ToolExecutionOptions, ToolSet } from "ai";
import { runGatedToolCall } from "../core/tool-call.js";
import { requireHookbusRun } from "../core/run.js";
import { HOOKBUS_TOOL } from "./approval.js";

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === "function"
  );
}

async function lastValue(value: unknown): Promise<unknown> {
  if (!isAsyncIterable(value)) return value;
  let last: unknown;
  for await (const item of value) last = item;
  return last;
}

/** The same tools, each execution checked by hookbus within the current run. */
export function hookbusTools<TOOLS extends ToolSet>(tools: TOOLS): TOOLS {
  const wrapped: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as
      ((input: unknown, options: ToolExecutionOptions<unknown>) => unknown) | undefined;
    if (execute === undefined) {
      wrapped[name] = tool;
      continue;
    }
    wrapped[name] = {
      ...tool,
      [HOOKBUS_TOOL]: true,
      execute: async (input: unknown, options: ToolExecutionOptions<unknown>) => {
        const run = requireHookbusRun(`tool ${JSON.stringify(name)}`);
        const outcome = await runGatedToolCall(
          run,
          { toolName: name, toolCallId: options.toolCallId, input },
          async (decidedInput) => lastValue(await execute(decidedInput, options)),
        );
        return outcome.output;
      },
    };
  }
  return wrapped as TOOLS;
}
