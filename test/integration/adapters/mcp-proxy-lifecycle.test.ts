/**
 * `hookbus mcp-proxy` as an MCP host runs it (the real CLI, spawned): it ends with its client
 * (stdin closed, SIGTERM, SIGINT, SIGHUP) and takes its upstream server with it; with NATS away
 * it keeps running and answers every tool call with a coded refusal, and decides again once
 * NATS and a coordinator are back.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { definePolicy, runPolicy, type PolicyRunner } from "../../../src/index.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));
const upstreamServer = fileURLToPath(
  new URL("../../fixtures/mcp/upstream-server.mjs", import.meta.url),
);
const dir = mkdtempSync(join(tmpdir(), "hookbus-mcp-life-"));
const nats = useNatsServer({ own: true });
let seq = 0;

const proxyArgs = (namespace: string) => [
  cli,
  "mcp-proxy",
  "--server",
  nats.url(),
  "--namespace",
  namespace,
  "--timeout-ms",
  "2000",
  "--log-level",
  "warn",
  "--",
  process.execPath,
  upstreamServer,
];

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The proxy with its stdin held open, and the pid of the upstream server it started. */
async function startProxy(): Promise<{
  proxy: ChildProcess;
  exited: Promise<number | null>;
  upstreamPid: number;
}> {
  const pidFile = join(dir, `upstream-${++seq}.pid`);
  const proxy = spawn(process.execPath, proxyArgs(uniqueNamespace("mcp-life")), {
    env: { ...process.env, HOOKBUS_CLI_SOURCE: "1", UPSTREAM_PID_FILE: pidFile },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) =>
    proxy.once("exit", (code) => resolve(code)),
  );
  const upstreamPid = await until(
    () => (existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined),
    60_000,
    "the upstream server's pid",
  );
  return { proxy, exited, upstreamPid };
}

async function expectEnded(run: { exited: Promise<number | null>; upstreamPid: number }) {
  const code = await Promise.race([
    run.exited,
    new Promise<string>((resolve) => setTimeout(() => resolve("still running"), 15_000)),
  ]);
  expect(code).toBe(0);
  await until(() => !alive(run.upstreamPid) || undefined, 10_000, "the upstream server to exit");
}

describe("hookbus mcp-proxy ends with its client, and its upstream with it", () => {
  it("exits when its client closes stdin", async () => {
    const run = await startProxy();
    run.proxy.stdin?.end();
    await expectEnded(run);
  }, 90_000);

  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
    it(`exits on ${signal} with its stdin still open`, async () => {
      const run = await startProxy();
      run.proxy.kill(signal);
      await expectEnded(run);
      run.proxy.stdin?.destroy();
    }, 90_000);
});

describe("hookbus mcp-proxy while NATS is away", () => {
  let coordinator: Coordinator | undefined;
  let worker: PolicyRunner | undefined;
  let client: Client | undefined;
  afterAll(async () => {
    await client?.close();
    await worker?.stop();
    await coordinator?.stop();
  });

  it("refuses each call with a coded error, keeps running, and decides once NATS is back", async () => {
    const namespace = uniqueNamespace("mcp-away");
    await nats.handle().kill();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: proxyArgs(namespace),
      env: { ...(process.env as Record<string, string>), HOOKBUS_CLI_SOURCE: "1" },
      stderr: "pipe",
    });
    client = new Client({ name: "test-host", version: "1.0.0" });
    await client.connect(transport, { timeout: 60_000 });
    for (let i = 0; i < 2; i++) {
      const refused = (await client.callTool({
        name: "read_file",
        arguments: { path: "a" },
      })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toMatch(/HOOKBUS_NATS_UNREACHABLE/);
    }
    await expect(client.listTools()).rejects.toThrow(/HOOKBUS_NATS_UNREACHABLE/);

    await nats.handle().start();
    const nc = await nats.connect();
    coordinator = await startCoordinator({ nc, namespace });
    const allow = definePolicy({
      name: "allow-all",
      version: "1.0.0",
      hooks: { before_tool_call: () => undefined },
    });
    worker = await runPolicy(allow, { nc, namespace });
    await (
      await RegistryStore.open(nc, new Subjects(namespace))
    ).apply({ policies: [{ name: "allow-all", hooks: ["before_tool_call"], priority: 100 }] });
    const answered = await until(
      async () => {
        const result = (await client!.callTool({
          name: "read_file",
          arguments: { path: "a" },
        })) as CallToolResult;
        return result.isError === true ? undefined : result;
      },
      30_000,
      "a decided call after NATS came back",
    );
    expect(JSON.stringify(answered.content)).toContain("contents of a");
  }, 120_000);
});
