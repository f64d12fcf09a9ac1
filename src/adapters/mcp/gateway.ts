/**
 * An MCP server that stands in front of another one (the upstream) and puts every tool through
 * hookbus: `tools/list` is narrowed like a model's tool list at `before_llm_call` (and decided
 * again at every call, so a hidden tool is refused whatever was listed), `tools/call` goes through
 * `before_tool_call` (block → an MCP tool error, params rewritten) and its result through
 * `before_tool_result` (replaced or withheld), and `after_tool_call` is observed. Any MCP client (Claude Code, Cursor, an agent SDK) then gets
 * hookbus policies with no code.
 *
 * Only tools cross by default: resources and prompts are data paths no policy sees, so they are
 * passed through only when asked for (`passThrough`).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  McpError,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { HookbusClient } from "../../agent/client.js";
import { isHookbusError } from "../../foundation/errors.js";
import { decideOffer, listedTool, UpstreamTools } from "./offered.js";
import { toolResultFromContent, withheld, refusal } from "./results.js";

export type McpPassThrough = "resources" | "prompts";

export interface McpGatewayOptions {
  /**
   * The hookbus client, or a function that returns the current one and throws a coded error while
   * there is none (the CLI connects in the background; every tool call is refused meanwhile).
   */
  hookbus: HookbusClient | (() => HookbusClient);
  /** A connected client of the upstream MCP server. */
  upstream: Client;
  /** The agent the gateway calls hookbus as (the NATS user's subject token). */
  agentId: string;
  /** The session its calls belong to: one per downstream connection. */
  sessionKey: string;
  passThrough?: readonly McpPassThrough[];
  logger?: Logger;
  /**
   * Forward the upstream's tools/list_changed to this gateway's client (default true). Several
   * gateways sharing one upstream (the HTTP mode) forward it once, to every session, instead.
   */
  forwardToolListChanged?: boolean;
  /**
   * The upstream's tool list, shared by gateways on one upstream (the HTTP mode), which then
   * invalidates it on the upstream's tools/list_changed. Default: the gateway's own.
   * @internal serveHttp's; not in the published types.
   */
  upstreamTools?: UpstreamTools;
  /** How the gateway introduces itself to its client. */
  name?: string;
  version?: string;
}

function reasonOf(error: unknown): string {
  return isHookbusError(error)
    ? `hookbus could not decide (${error.code}): ${error.message}`
    : `hookbus could not decide: ${error instanceof Error ? error.message : String(error)}`;
}

export function createMcpGateway(options: McpGatewayOptions): Server {
  const { upstream } = options;
  const source = options.hookbus;
  const hookbus = (): HookbusClient => (typeof source === "function" ? source() : source);
  const ctx = {
    agentId: options.agentId,
    sessionKey: options.sessionKey,
    runId: options.sessionKey,
    channel: "mcp",
  };
  const upstreamCaps = upstream.getServerCapabilities() ?? {};
  const passThrough = new Set(options.passThrough ?? []);
  const capabilities: ServerCapabilities = { tools: { listChanged: true } };
  if (passThrough.has("resources") && upstreamCaps.resources !== undefined)
    capabilities.resources = {};
  if (passThrough.has("prompts") && upstreamCaps.prompts !== undefined) capabilities.prompts = {};

  const server = new Server(
    { name: options.name ?? "hookbus-mcp-gateway", version: options.version ?? "0.0.0" },
    { capabilities },
  );
  const upstreamTools = options.upstreamTools ?? new UpstreamTools(upstream);
  let callSeq = 0;

  /**
   * tools/list answers every offered tool in one page: the upstream's pages are read and decided
   * as one list, so no page's decision can differ from another's (a client's cursor is ignored).
   */
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      const offer = await decideOffer(hookbus(), ctx, await upstreamTools.all());
      return { tools: offer.visible.map(listedTool) };
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `${reasonOf(error)}; no tools are offered`, {
        code: isHookbusError(error) ? error.code : "HOOKBUS_INTERNAL",
      });
    }
  });

  /** Why a call of `toolName` is refused before it is even gated, or undefined when it is offered. */
  async function notOffered(toolName: string): Promise<string | undefined> {
    let tools = await upstreamTools.all();
    if (!tools.some((tool) => tool.name === toolName)) {
      upstreamTools.invalidate(); // the upstream may have added it without telling us
      tools = await upstreamTools.all();
      if (!tools.some((tool) => tool.name === toolName))
        return `hookbus: the tool "${toolName}" is not offered by this server`;
    }
    return (await decideOffer(hookbus(), ctx, tools)).hidden.get(toolName);
  }

  server.setRequestHandler(
    CallToolRequestSchema,
    async (request, extra): Promise<CallToolResult> => {
      const toolName = request.params.name;
      const toolCallId = `mcp-${String(extra.requestId)}-${++callSeq}`;
      const toolCtx = { ...ctx, toolName, toolCallId };
      let params: Record<string, unknown> = request.params.arguments ?? {};
      const observe = (event: Record<string, unknown>) => {
        // Recorded through the coordinators; close() waits for it, the answer does not.
        const notRecorded = (error: unknown) =>
          options.logger?.warn({ err: error, toolName }, "after_tool_call not recorded");
        try {
          hookbus()
            .observe("after_tool_call", toolCtx, { toolName, toolCallId, params, ...event })
            .catch(notRecorded);
        } catch (error) {
          notRecorded(error); // no connection to hookbus: the answer says so already
        }
      };

      try {
        // Decided per call under the current policies, whatever the client listed before.
        const hiddenReason = await notOffered(toolName);
        if (hiddenReason !== undefined) {
          observe({ blocked: true, blockReason: hiddenReason });
          return refusal(hiddenReason);
        }
        const gate = await hookbus().decide("before_tool_call", toolCtx, {
          toolName,
          toolCallId,
          params,
        });
        if (gate.outcome === "block") {
          const reason = `hookbus (${gate.blockedBy ?? "policy"}): ${gate.blockReason ?? "blocked"}`;
          observe({ blocked: true, blockReason: reason });
          return refusal(reason);
        }
        if (gate.params !== undefined) params = gate.params;
      } catch (error) {
        // Fail closed: a tool runs only on a decision.
        return refusal(`${reasonOf(error)}; the tool call is refused`);
      }

      const started = Date.now();
      let result: CallToolResult;
      try {
        result = (await upstream.callTool({ name: toolName, arguments: params }, undefined, {
          signal: extra.signal,
        })) as CallToolResult;
      } catch (error) {
        observe({
          error: error instanceof Error ? error.message : String(error),
          durationMs: Date.now() - started,
        });
        throw error;
      }
      const durationMs = Date.now() - started;

      let answer: CallToolResult;
      try {
        const review = await hookbus().decide("before_tool_result", toolCtx, {
          toolName,
          toolCallId,
          params,
          result,
          isError: result.isError === true,
          durationMs,
        });
        if (review.outcome === "block")
          answer = withheld(
            `hookbus (${review.blockedBy ?? "policy"}): ${review.blockReason ?? "blocked"}`,
          );
        else if (review.content !== undefined)
          answer = toolResultFromContent(review.content, result.isError === true);
        else answer = result;
      } catch (error) {
        answer = withheld(`${reasonOf(error)}; the tool output is withheld`);
      }
      observe({ result: answer, durationMs });
      return answer;
    },
  );

  if (capabilities.resources !== undefined) {
    server.setRequestHandler(ListResourcesRequestSchema, (r) => upstream.listResources(r.params));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, (r) =>
      upstream.listResourceTemplates(r.params),
    );
    server.setRequestHandler(ReadResourceRequestSchema, (r) => upstream.readResource(r.params));
  }
  if (capabilities.prompts !== undefined) {
    server.setRequestHandler(ListPromptsRequestSchema, (r) => upstream.listPrompts(r.params));
    server.setRequestHandler(GetPromptRequestSchema, (r) => upstream.getPrompt(r.params));
  }

  if (options.forwardToolListChanged !== false)
    upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      upstreamTools.invalidate();
      await server.sendToolListChanged().catch(() => undefined);
    });
  return server;
}
