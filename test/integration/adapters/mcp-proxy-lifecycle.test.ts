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

/** Running, not a zombie (a killed process its parent has not reaped yet still answers signal 0). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]$/.test(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "");
  } catch {
    return false;
  }
}

function parentOf(pid: number): { pid: number; name: string } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  const parent = readFileSync(`/proc/${ppid}/stat`, "utf8");
  return { pid: ppid, name: parent.slice(parent.indexOf("(") + 1, parent.lastIndexOf(")")) };
}

const npxLike = fileURLToPath(new URL("../../fixtures/mcp/npx-like.mjs", import.meta.url));
const quoted = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

describe.runIf(process.platform === "linux")("hookbus mcp-proxy under npx (issue 33.6)", () => {
  it("exits with its server when npx is killed -9, a shell between them and stdin still held", async () => {
    const pidFile = join(dir, `upstream-${++seq}.pid`);
    const command = [process.execPath, ...proxyArgs(uniqueNamespace("mcp-npx"))].map(quoted);
    // `sleep` writes nothing and holds the pipe that is npx's, the shell's and the proxy's stdin
    // open: the third process of the issue. In its own process group, so the test ends it all.
    const holder = spawn(
      "sh",
      [
        "-c",
        `sleep 300 | exec ${quoted(process.execPath)} ${quoted(npxLike)} ${quoted(command.join(" "))}`,
      ],
      {
        env: { ...process.env, HOOKBUS_CLI_SOURCE: "1", UPSTREAM_PID_FILE: pidFile },
        stdio: ["ignore", "pipe", "inherit"],
        detached: true,
      },
    );
    try {
      const upstreamPid = await until(
        () =>
          existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) || undefined : undefined,
        60_000,
        "the upstream server's pid",
      );
      const proxy = parentOf(upstreamPid);
      const shell = parentOf(proxy.pid);
      const npx = parentOf(shell.pid);
      // As under npm: npx → sh → the proxy → its server.
      expect(shell.name).toMatch(/^(sh|dash|bash)$/);
      expect(readFileSync(`/proc/${npx.pid}/cmdline`, "utf8")).toContain("npx-like.mjs");

      process.kill(npx.pid, "SIGKILL");
      const started = Date.now();
      await until(() => !running(proxy.pid) || undefined, 15_000, "the proxy to exit");
      await until(() => !running(upstreamPid) || undefined, 10_000, "its server to exit");
      console.log(`mcp-proxy and its server gone ${Date.now() - started} ms after npx was killed`);
      expect(holder.exitCode).toBeNull(); // sleep still holds stdin: the proxy did not see it end
    } finally {
      process.kill(-holder.pid!, "SIGKILL");
      holder.stdout?.destroy();
    }
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
