/**
 * MCP tool names. Claude Code calls an MCP tool `mcp__<server>__<tool>`; the hookbus MCP gateway
 * knows its upstream server by configuration and sees the bare tool name. Both reduce to
 * `{ server, tool }`, and the tool's class is the class of its bare name.
 */
export interface McpToolName {
  server: string;
  tool: string;
}

const MCP_PREFIX = "mcp__";

/** `{server, tool}` for a Claude Code style MCP name, or undefined for any other name. */
export function parseMcpToolName(name: string): McpToolName | undefined {
  if (!name.startsWith(MCP_PREFIX)) return undefined;
  const rest = name.slice(MCP_PREFIX.length);
  const split = rest.indexOf("__");
  // A server name with no tool part (`mcp__srv`) or an empty server is not an MCP tool name.
  if (split <= 0 || split + 2 >= rest.length) return undefined;
  return { server: rest.slice(0, split), tool: rest.slice(split + 2) };
}

/** The Claude Code style name of an MCP tool (the inverse of parseMcpToolName). */
export function mcpToolName(server: string, tool: string): string {
  return `${MCP_PREFIX}${server}__${tool}`;
}
