/**
 * hookbus/mcp: an MCP gateway that puts another MCP server's tools behind hookbus policies.
 * Needs the optional peer dependency `@modelcontextprotocol/sdk`. `hookbus mcp-proxy` runs it.
 */
export { createMcpGateway, type McpGatewayOptions, type McpPassThrough } from "./gateway.js";
export {
  connectUpstream,
  serveHttp,
  serveStdio,
  upstreamEnvironment,
  MAX_HTTP_SESSIONS,
  type HttpGateway,
  type ServeOptions,
  type Upstream,
} from "./serve.js";
export { readLaunchers, type Launchers, type WatchedProcess } from "./launcher.js";
