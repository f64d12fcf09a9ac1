/**
 * An MCP host's side of `hookbus mcp-proxy` for the gateway tests: the proxy run over stdio in
 * front of an upstream fixture (test/fixtures/mcp/, which logs every tool it runs to
 * UPSTREAM_LOG), what the upstream really ran, and a tool result's text.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** The CLI, run from source (with HOOKBUS_CLI_SOURCE=1). */
export const cli = fileURLToPath(new URL("../../bin/hookbus.js", import.meta.url));

/** The path of an upstream MCP server in test/fixtures/mcp/. */
export function mcpFixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/mcp/${name}`, import.meta.url));
}

export interface ProxyRun {
  url: string;
  namespace: string;
  /** The upstream server's script, run with this node. */
  upstream: string;
  upstreamLog: string;
  /** More `mcp-proxy` options (before `--`). */
  options?: string[];
}

/** An MCP client on `hookbus mcp-proxy -- node <upstream>`, as an MCP host runs it. */
export async function connectThroughProxy(run: ProxyRun): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      cli,
      "mcp-proxy",
      "--server",
      run.url,
      "--namespace",
      run.namespace,
      "--agent",
      "mcp-agent",
      "--log-level",
      "warn",
      ...(run.options ?? []),
      "--",
      process.execPath,
      run.upstream,
    ],
    env: {
      ...(process.env as Record<string, string>),
      HOOKBUS_CLI_SOURCE: "1",
      UPSTREAM_LOG: run.upstreamLog,
    },
    stderr: "pipe",
  });
  const client = new Client({ name: "test-host", version: "1.0.0" });
  await client.connect(transport, { timeout: 60_000 });
  return client;
}

/** The tools the upstream ran, in order, with their arguments (none before its log exists). */
export function upstreamRan(log: string): { name: string; args: Record<string, unknown> }[] {
  return existsSync(log)
    ? readFileSync(log, "utf8")
        .trim()
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l) as { name: string; args: Record<string, unknown> })
    : [];
}

/** A tool result's text parts, joined; other parts as `[type]`. */
export function toolText(result: CallToolResult): string {
  return result.content
    .map((part) => (part.type === "text" ? part.text : `[${part.type}]`))
    .join("");
}
