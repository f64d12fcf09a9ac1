/**
 * One `tools/call` through the gateway, as named steps: is the tool offered (decided again at
 * every call), before_tool_call (block → an MCP tool error, params rewritten), the upstream's
 * tool, before_tool_result (replaced or withheld), and the after_tool_call observation.
 *
 * Fail closed: a tool runs only on a decision.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { HookbusClient } from "../../agent/client.js";
import { isHookbusError } from "../../foundation/errors.js";
import { decideOffer, type UpstreamTools } from "./offered.js";
import { refusal, toolResultFromContent, withheld } from "./results.js";

/** What every call of one gateway shares. */
export interface GatewayScope {
  /** The current hookbus client (throws a coded error while there is none). */
  hookbus: () => HookbusClient;
  upstream: Client;
  upstreamTools: UpstreamTools;
  ctx: { agentId: string; sessionKey: string; runId: string; channel: string };
  logger?: Logger;
}

/** One call: its context, and its params as they stand (a gate may rewrite them). */
interface GatewayCall {
  toolName: string;
  toolCallId: string;
  toolCtx: GatewayScope["ctx"] & { toolName: string; toolCallId: string };
  params: Record<string, unknown>;
}

export function reasonOf(error: unknown): string {
  return isHookbusError(error)
    ? `hookbus could not decide (${error.code}): ${error.message}`
    : `hookbus could not decide: ${error instanceof Error ? error.message : String(error)}`;
}

export async function callTool(
  scope: GatewayScope,
  request: { name: string; arguments?: Record<string, unknown> },
  toolCallId: string,
  signal: AbortSignal,
): Promise<CallToolResult> {
  const toolName = request.name;
  const call: GatewayCall = {
    toolName,
    toolCallId,
    toolCtx: { ...scope.ctx, toolName, toolCallId },
    params: request.arguments ?? {},
  };
  const refused = await gate(scope, call);
  if (refused !== undefined) return refused;
  const started = Date.now();
  let result: CallToolResult;
  try {
    result = (await scope.upstream.callTool({ name: toolName, arguments: call.params }, undefined, {
      signal,
    })) as CallToolResult;
  } catch (error) {
    observe(scope, call, {
      error: error instanceof Error ? error.message : String(error),
      durationMs: Date.now() - started,
    });
    throw error;
  }
  const durationMs = Date.now() - started;
  const answer = await review(scope, call, result, durationMs);
  observe(scope, call, { result: answer, durationMs });
  return answer;
}

/** Why a call of `toolName` is refused before it is even gated, or undefined when it is offered. */
async function notOffered(scope: GatewayScope, toolName: string): Promise<string | undefined> {
  const { upstreamTools } = scope;
  let tools = await upstreamTools.all();
  if (!tools.some((tool) => tool.name === toolName)) {
    upstreamTools.invalidate(); // the upstream may have added it without telling us
    tools = await upstreamTools.all();
    if (!tools.some((tool) => tool.name === toolName))
      return `hookbus: the tool "${toolName}" is not offered by this server`;
  }
  return (await decideOffer(scope.hookbus(), scope.ctx, tools)).hidden.get(toolName);
}

/** The refusal of a call not offered or blocked at before_tool_call; undefined: it may run. */
async function gate(scope: GatewayScope, call: GatewayCall): Promise<CallToolResult | undefined> {
  const { toolName, toolCallId } = call;
  try {
    // Decided per call under the current policies, whatever the client listed before.
    const hiddenReason = await notOffered(scope, toolName);
    if (hiddenReason !== undefined) {
      observe(scope, call, { blocked: true, blockReason: hiddenReason });
      return refusal(hiddenReason);
    }
    const decision = await scope.hookbus().decide("before_tool_call", call.toolCtx, {
      toolName,
      toolCallId,
      params: call.params,
    });
    if (decision.outcome === "block") {
      const reason = `hookbus (${decision.blockedBy ?? "policy"}): ${decision.blockReason ?? "blocked"}`;
      observe(scope, call, { blocked: true, blockReason: reason });
      return refusal(reason);
    }
    if (decision.params !== undefined) call.params = decision.params;
    return undefined;
  } catch (error) {
    // Fail closed: a tool runs only on a decision.
    return refusal(`${reasonOf(error)}; the tool call is refused`);
  }
}

/** What the client gets of the tool's result: it, a policy's replacement, or a withheld notice. */
async function review(
  scope: GatewayScope,
  call: GatewayCall,
  result: CallToolResult,
  durationMs: number,
): Promise<CallToolResult> {
  try {
    const decision = await scope.hookbus().decide("before_tool_result", call.toolCtx, {
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      params: call.params,
      result,
      isError: result.isError === true,
      durationMs,
    });
    if (decision.outcome === "block")
      return withheld(
        `hookbus (${decision.blockedBy ?? "policy"}): ${decision.blockReason ?? "blocked"}`,
      );
    if (decision.content !== undefined)
      return toolResultFromContent(decision.content, result.isError === true);
    return result;
  } catch (error) {
    return withheld(`${reasonOf(error)}; the tool output is withheld`);
  }
}

/** Record after_tool_call; close() waits for it, the answer does not. */
function observe(scope: GatewayScope, call: GatewayCall, event: Record<string, unknown>): void {
  const { toolName, toolCallId } = call;
  const notRecorded = (error: unknown) =>
    scope.logger?.warn({ err: error, toolName }, "after_tool_call not recorded");
  try {
    scope
      .hookbus()
      .observe("after_tool_call", call.toolCtx, {
        toolName,
        toolCallId,
        params: call.params,
        ...event,
      })
      .catch(notRecorded);
  } catch (error) {
    notRecorded(error); // no connection to hookbus: the answer says so already
  }
}
