/**
 * `hookbus mcp-proxy` between a real MCP client (the SDK's Client) and a real MCP server (the
 * SDK's McpServer, test/fixtures/mcp/upstream-server.mjs), both over stdio as Claude Code or
 * Cursor would run them, with a real coordinator and policy worker deciding every tool.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Bus, definePolicy, runPolicy, type PolicyRunner } from "../../../src/index.js";
import { startChild } from "../../support/child.js";
import {
  cli,
  connectThroughProxy as connectProxy,
  mcpFixture,
  toolText,
  upstreamRan,
} from "../../support/mcp-host.js";
import { readLog } from "../../support/log.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const upstreamServer = mcpFixture("upstream-server.mjs");
const dir = mkdtempSync(join(tmpdir(), "hookbus-mcp-"));

const gatekeeper = definePolicy({
  name: "mcp-gatekeeper",
  version: "1.0.0",
  hooks: {
    before_llm_call(event) {
      return { tools: (event.tools ?? []).filter((t) => !("name" in t) || t.name !== "exec") };
    },
    before_tool_call(event) {
      const path = event.params.path;
      if (event.toolName === "write_file" && typeof path === "string" && path.startsWith("/etc/"))
        return { block: true, blockReason: "writes to /etc are not allowed" };
      if (event.toolName === "read_file" && path === "secrets.txt")
        return { params: { ...event.params, path: "public.txt" } };
      return undefined;
    },
    before_tool_result(event) {
      const text = JSON.stringify(event.result);
      if (text.includes("@")) return { content: "[redacted: the output held an email address]" };
      return undefined;
    },
  },
});

const nats = useNatsServer();
const namespace = uniqueNamespace("mcp");
let coordinator: Coordinator;
let worker: PolicyRunner;

beforeAll(async () => {
  const nc = await nats.connect();
  coordinator = await startCoordinator({ nc, namespace });
  worker = await runPolicy(gatekeeper, { nc, namespace });
  await (
    await RegistryStore.open(nc, new Subjects(namespace))
  ).apply({
    policies: [
      {
        name: "mcp-gatekeeper",
        hooks: ["before_llm_call", "before_tool_call", "before_tool_result"],
        priority: 100,
      },
    ],
  });
  await until(() => coordinator.registry().revision > 0, 10_000, "registry at the coordinator");
}, 30_000);

afterAll(async () => {
  await worker?.stop();
  await coordinator?.stop();
});

/** An MCP client on `hookbus mcp-proxy -- node upstream-server.mjs`, as an MCP host runs it. */
function connectThroughProxy(ns: string, upstreamLog: string, extra: string[] = []) {
  return connectProxy({
    url: nats.url(),
    namespace: ns,
    upstream: upstreamServer,
    upstreamLog,
    options: ["--session", "mcp-session-1", ...extra],
  });
}

describe("hookbus mcp-proxy (stdio)", () => {
  const upstreamLog = join(dir, "stdio.ndjson");
  let client: Client;
  beforeAll(async () => {
    client = await connectThroughProxy(namespace, upstreamLog);
  }, 90_000);
  afterAll(async () => {
    await client?.close();
  });

  it("hides a tool a policy removed from tools/list, and offers only tools", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["read_file", "write_file"]);
    expect(client.getServerCapabilities()?.resources).toBeUndefined();
  }, 60_000);

  it("refuses a call to the hidden tool: it never runs, and the refusal is recorded", async () => {
    const result = (await client.callTool({
      name: "exec",
      arguments: { command: "rm -rf /" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toContain("mcp-gatekeeper");
    expect(upstreamRan(upstreamLog).map((t) => t.name)).not.toContain("exec");
    const bus = await Bus.open(await nats.connect(), { namespace });
    const records = await until(
      async () => {
        const all = await readLog(bus);
        return all.some((r) => r.hook === "after_tool_call") ? all : undefined;
      },
      20_000,
      "the refusal's after_tool_call record",
    );
    const refused = records.find((r) => r.hook === "after_tool_call");
    expect(refused).toMatchObject({ event: { toolName: "exec", blocked: true } });
    expect(
      records.some(
        (r) =>
          r.kind === "decision" && r.hook === "before_tool_call" && r.event.toolName === "exec",
      ),
    ).toBe(false);
  }, 60_000);

  it("blocks a call by its params as an MCP tool error, without running it", async () => {
    const result = (await client.callTool({
      name: "write_file",
      arguments: { path: "/etc/passwd", content: "x" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(toolText(result)).toBe("hookbus (mcp-gatekeeper): writes to /etc are not allowed");
    expect(upstreamRan(upstreamLog).some((t) => t.name === "write_file")).toBe(false);
  }, 60_000);

  it("sends the rewritten params upstream and redacts the result before the client sees it", async () => {
    const result = (await client.callTool({
      name: "read_file",
      arguments: { path: "secrets.txt" },
    })) as CallToolResult;
    expect(
      upstreamRan(upstreamLog)
        .filter((t) => t.name === "read_file")
        .at(-1)?.args,
    ).toEqual({ path: "public.txt" });
    expect(toolText(result)).toBe("[redacted: the output held an email address]");
    expect(result.structuredContent).toBeUndefined();
  }, 60_000);
});

describe("hookbus mcp-proxy fails closed and serves HTTP", () => {
  it("refuses every tool call when no coordinator answers, and runs none", async () => {
    const orphan = uniqueNamespace("mcp-orphan");
    await (
      await RegistryStore.open(await nats.connect(), new Subjects(orphan))
    ).apply({
      policies: [{ name: "mcp-gatekeeper", hooks: ["before_tool_call"], priority: 100 }],
    });
    const log = join(dir, "orphan.ndjson");
    const client = await connectThroughProxy(orphan, log, ["--timeout-ms", "2000"]);
    try {
      const result = (await client.callTool({
        name: "read_file",
        arguments: { path: "a" },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(toolText(result)).toMatch(/HOOKBUS_(COORDINATOR_UNAVAILABLE|CALL_TIMEOUT)/);
      expect(upstreamRan(log)).toEqual([]);
    } finally {
      await client.close();
    }
  }, 90_000);

  it("serves Streamable HTTP on a local port, each MCP session deciding through hookbus", async () => {
    const log = join(dir, "http.ndjson");
    const proxy = startChild(
      [
        cli,
        "mcp-proxy",
        "--server",
        nats.url(),
        "--namespace",
        namespace,
        "--http",
        "0",
        "--log-level",
        "info",
        "--",
        process.execPath,
        upstreamServer,
      ],
      { HOOKBUS_CLI_SOURCE: "1", UPSTREAM_LOG: log },
    );
    try {
      const url = await until(
        () => /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(proxy.errors())?.[1],
        60_000,
        "the gateway's URL",
      );
      const client = new Client({ name: "http-host", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("exec");
      const blocked = (await client.callTool({
        name: "write_file",
        arguments: { path: "/etc/hosts", content: "x" },
      })) as CallToolResult;
      expect(blocked.isError).toBe(true);
      expect(upstreamRan(log)).toEqual([]);
      await client.close();
    } finally {
      proxy.child.kill("SIGTERM");
      expect(await proxy.exited).toBe(0);
    }
  }, 90_000);
});
