/**
 * The tool side of `hookbus/pi`: pi's `beforeToolCall` and `afterToolCall` hooks, on the shared
 * tool gates (src/adapters/core/tool-call.ts).
 *
 * - `beforeToolCall`: offered tools, the after_llm_call gate and before_tool_call. A block (or a
 *   gate that could not decide) returns pi's `{ block: true, reason }`: pi never runs the tool and
 *   gives the model an error tool result with the reason. pi prepares the tool calls of one
 *   message one after another, also when it then runs them in parallel, so every call passes
 *   this gate before any of them runs.
 * - Params rewriting: pi hands `execute` the very `args` object it passed to `beforeToolCall` (its
 *   own validated copy, not the model's message), so the decided params are written into it.
 *   Rewritten params are what the policies wrote; pi does not validate them again.
 * - `afterToolCall`: before_tool_result on the content the model would see (a replacement
 *   becomes the result's content; a block or an undecided call hides the result behind an error
 *   result), then the after_tool_call observation.
 */
import type {
  AfterToolCallContext,
  AfterToolCallResult,
  AgentToolCall,
  BeforeToolCallContext,
  BeforeToolCallResult,
} from "@mariozechner/pi-agent-core";
import type { ImageContent, TextContent } from "@mariozechner/pi-ai";
import { HookbusError } from "../../foundation/errors.js";
import { requireHookbusRun } from "../core/run.js";
import {
  gateToolCall,
  reportToolResult,
  toolResultText,
  type ToolResultReplacement,
} from "../core/tool-call.js";
import { describeError } from "./stream.js";

type ResultContent = (TextContent | ImageContent)[];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** When each allowed call started (for `durationMs`); weak: a call that never finishes is freed. */
const started = new WeakMap<AgentToolCall, number>();

export async function gateBeforeToolCall(
  context: BeforeToolCallContext,
): Promise<BeforeToolCallResult | undefined> {
  const { toolCall, args } = context;
  try {
    const run = requireHookbusRun(`pi tool ${JSON.stringify(toolCall.name)}`);
    const input = await gateToolCall(run, {
      toolName: toolCall.name,
      toolCallId: toolCall.id,
      input: args,
    });
    if (input !== args) writeParams(args, input);
    started.set(toolCall, Date.now());
    return undefined;
  } catch (error) {
    return { block: true, reason: describeError(error) };
  }
}

/** Replace the contents of pi's `args` object (the one `execute` receives) with `input`. */
function writeParams(args: unknown, input: unknown): void {
  if (!isRecord(args) || !isRecord(input)) {
    throw new HookbusError(
      "HOOKBUS_INVALID_VERDICT",
      "hookbus/pi can only rewrite object params (pi passes the tool's validated args object)",
    );
  }
  for (const key of Object.keys(args)) delete args[key];
  Object.assign(args, input);
}

export async function reportAfterToolCall(
  context: AfterToolCallContext,
): Promise<AfterToolCallResult | undefined> {
  const { toolCall, args, result, isError } = context;
  const began = started.get(toolCall);
  started.delete(toolCall);
  try {
    const run = requireHookbusRun(`pi tool ${JSON.stringify(toolCall.name)}`);
    const content: ResultContent = result.content;
    const replacement = await reportToolResult(
      run,
      { toolName: toolCall.name, toolCallId: toolCall.id, input: args },
      isError ? { ok: false, error: toolResultText(content) } : { ok: true, output: content },
      began === undefined ? 0 : Date.now() - began,
    );
    return replacement === undefined ? undefined : { content: piContent(replacement) };
  } catch (error) {
    // Fail closed: what the policies did not allow never reaches the model.
    return { content: [{ type: "text", text: describeError(error) }], details: {}, isError: true };
  }
}

/** A before_tool_result replacement as pi's content: text and image blocks. */
function piContent(replacement: ToolResultReplacement): ResultContent {
  if (typeof replacement === "string") return [{ type: "text", text: replacement }];
  const content: ResultContent = [];
  for (const part of replacement) {
    if (part.type === "text" && typeof part.text === "string") {
      content.push({ type: "text", text: part.text });
    } else if (
      part.type === "image" &&
      typeof part.data === "string" &&
      typeof part.mimeType === "string"
    ) {
      content.push({ type: "image", data: part.data, mimeType: part.mimeType });
    } else {
      // A part pi cannot carry is shown as its JSON text rather than silently dropped.
      content.push({ type: "text", text: JSON.stringify(part) });
    }
  }
  return content;
}
