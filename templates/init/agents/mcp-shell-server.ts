/**
 * A stand-in MCP server with one shell tool, `run_command`, so the starter can show a block
 * offline: it never runs anything, it only says what it would have run. Put your real MCP servers
 * behind `hookbus mcp-proxy` the same way (mcp.json).
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "stand-in-shell", version: "1.0.0" });

server.registerTool(
  "run_command",
  { description: "Run a shell command", inputSchema: { command: z.string() } },
  ({ command }) => ({ content: [{ type: "text", text: `would have run: ${command}` }] }),
);

await server.connect(new StdioServerTransport());
