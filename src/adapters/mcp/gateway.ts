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
  type ServerCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { HookbusClient } from "../../agent/client.js";
import { isHookbusError } from "../../foundation/errors.js";
import { decideOffer, listedTool, UpstreamTools } from "./offered.js";
import { callTool, reasonOf, type GatewayScope } from "./tool-call.js";

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

/** Tools always; resources and prompts only when asked for and the upstream has them. */
function gatewayCapabilities(upstream: Client, passThrough: ReadonlySet<McpPassThrough>) {
  const upstreamCaps = upstream.getServerCapabilities() ?? {};
  const capabilities: ServerCapabilities = { tools: { listChanged: true } };
  if (passThrough.has("resources") && upstreamCaps.resources !== undefined)
    capabilities.resources = {};
  if (passThrough.has("prompts") && upstreamCaps.prompts !== undefined) capabilities.prompts = {};
  return capabilities;
}

/**
 * tools/list answers every offered tool in one page: the upstream's pages are read and decided as
 * one list, so no page's decision can differ from another's (a client's cursor is ignored).
 */
function handleToolList(server: Server, scope: GatewayScope): void {
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      const offer = await decideOffer(scope.hookbus(), scope.ctx, await scope.upstreamTools.all());
      return { tools: offer.visible.map(listedTool) };
    } catch (error) {
      throw new McpError(ErrorCode.InternalError, `${reasonOf(error)}; no tools are offered`, {
        code: isHookbusError(error) ? error.code : "HOOKBUS_INTERNAL",
      });
    }
  });
}

/** Resources and prompts, when passed through, go to the upstream as they are. */
function passThroughData(server: Server, upstream: Client, capabilities: ServerCapabilities) {
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
}

export function createMcpGateway(options: McpGatewayOptions): Server {
  const { upstream } = options;
  const source = options.hookbus;
  const scope: GatewayScope = {
    hookbus: () => (typeof source === "function" ? source() : source),
    upstream,
    upstreamTools: options.upstreamTools ?? new UpstreamTools(upstream),
    ctx: {
      agentId: options.agentId,
      sessionKey: options.sessionKey,
      runId: options.sessionKey,
      channel: "mcp",
    },
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  };
  const capabilities = gatewayCapabilities(upstream, new Set(options.passThrough ?? []));
  const server = new Server(
    { name: options.name ?? "hookbus-mcp-gateway", version: options.version ?? "0.0.0" },
    { capabilities },
  );
  handleToolList(server, scope);
  let callSeq = 0;
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    callTool(scope, request.params, `mcp-${String(extra.requestId)}-${++callSeq}`, extra.signal),
  );
  passThroughData(server, upstream, capabilities);
  if (options.forwardToolListChanged !== false)
    upstream.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      scope.upstreamTools.invalidate();
      await server.sendToolListChanged().catch(() => undefined);
    });
  return server;
}
