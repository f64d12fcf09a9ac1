/**
 * An MCP host in a few lines, as Claude Code or Cursor would be: it starts the stand-in server
 * (mcp-shell-server.ts) behind `hookbus mcp-proxy`, lists the tools and calls `run_command`
 * twice. `ls` runs; `rm -rf /` is refused by the no-shell policy, and the audit log says so.
 * Run it with `npm run try` once NATS, the registry, the worker and a coordinator are up.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const transport = new StdioClientTransport({
  command: "npx",
  args: [
    "--no-install",
    "hookbus",
    "mcp-proxy",
    "--agent",
    "my-agent",
    "--",
    "npx",
    "--no-install",
    "tsx",
    "mcp-shell-server.ts",
  ],
  // The proxy reads NATS_URL and HOOKBUS_NAMESPACE like every hookbus command.
  env: { ...(process.env as Record<string, string>) },
});
const client = new Client({ name: "try-mcp", version: "1.0.0" });
await client.connect(transport, { timeout: 60_000 });
try {
  const { tools } = await client.listTools();
  console.log(`tools offered: ${tools.map((tool) => tool.name).join(", ")}`);
  for (const command of ["ls", "rm -rf /"]) {
    const result = await client.callTool({ name: "run_command", arguments: { command } });
    const content = result.content as { type: string; text?: string }[];
    const text = content.map((part) => part.text ?? `[${part.type}]`).join("");
    console.log(`run_command ${command}: ${result.isError === true ? "refused" : "ran"}: ${text}`);
  }
} finally {
  await client.close();
}
