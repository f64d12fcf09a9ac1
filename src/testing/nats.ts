/**
 * Finding a NATS server with JetStream for tests, the demo and local tools, in this order:
 * `NATS_URL` → a `nats-server` binary spawned on a free port with its own store (so a test may
 * kill and restart it) → testcontainers (where a Docker engine runs) → a clear error saying what
 * to install. Never a silent skip.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { HookbusError } from "../foundation/errors.js";
import { freePort } from "./free-port.js";

export interface NatsServerHandle {
  url: string;
  /** How it was found: `env` (NATS_URL), `binary` (spawned here), `container` (testcontainers). */
  source: "env" | "binary" | "container";
  /** Stop it (spawned/container) and remove its store; a no-op for NATS_URL. */
  stop(): Promise<void>;
  /** Kill the process hard (SIGKILL) without removing its store. Owned servers only. */
  kill(): Promise<void>;
  /** Start it again on the same port with the same store. Owned servers only. */
  start(): Promise<void>;
}

export interface FindNatsOptions {
  /** The caller will kill/restart the server, so NATS_URL (someone else's server) is not enough. */
  own?: boolean;
  /** Extra nats-server arguments, e.g. `["--max_payload", "8MB"]` is not available on 2.9: use a config. */
  args?: string[];
}

const BINARY_CANDIDATES = [
  "/usr/sbin/nats-server",
  "/usr/bin/nats-server",
  "/usr/local/bin/nats-server",
];

export function findNatsServerBinary(): string | undefined {
  const fromEnv = process.env.NATS_SERVER_BIN;
  if (fromEnv !== undefined && existsSync(fromEnv)) return fromEnv;
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(dir, "nats-server");
    if (dir !== "" && existsSync(candidate)) return candidate;
  }
  return BINARY_CANDIDATES.find((path) => existsSync(path));
}

/** Resolves when something accepts TCP connections on the port. */
export async function waitForPort(
  port: number,
  host = "127.0.0.1",
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
      socket.connect(port, host);
    });
    if (open) return;
    if (Date.now() > until)
      throw new Error(`nothing is listening on ${host}:${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether a NATS server answers at host:port (reads its INFO line). */
export async function natsAnswers(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(false);
    }, timeoutMs);
    socket.once("data", (data) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(data.toString("utf8").startsWith("INFO "));
    });
    socket.once("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    socket.connect(port, host);
  });
}

async function spawnBinary(binary: string, args: string[]): Promise<NatsServerHandle> {
  const port = await freePort();
  const store = await mkdtemp(join(tmpdir(), "hookbus-nats-"));
  let child: ChildProcess | undefined;
  let output = "";

  const start = async () => {
    output = "";
    const proc = spawn(
      binary,
      ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store, ...args],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    proc.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    proc.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    child = proc;
    const exited = new Promise<never>((_, reject) =>
      proc.once("exit", (code) => reject(new Error(`nats-server exited (${code}): ${output}`))),
    );
    await Promise.race([waitForPort(port), exited]);
    // JetStream is ready once the server reports it (the port opens slightly earlier).
    const until = Date.now() + 10_000;
    while (!/Server is ready/.test(output) && Date.now() < until)
      await new Promise((r) => setTimeout(r, 20));
  };

  const stopProcess = async (signal: NodeJS.Signals) => {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      proc.once("exit", () => resolve());
      proc.kill(signal);
    });
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    source: "binary",
    start,
    kill: () => stopProcess("SIGKILL"),
    async stop() {
      await stopProcess("SIGTERM");
      await rm(store, { recursive: true, force: true });
    },
  };
}

async function startContainer(): Promise<NatsServerHandle> {
  // Loaded only here: testcontainers is a dev tool and needs a Docker engine.
  const { NatsContainer } = await import("@testcontainers/nats");
  const container = await new NatsContainer("nats:2.10-alpine").withJetStream().start();
  const url = `nats://${container.getHost()}:${container.getMappedPort(4222)}`;
  const notOwned = () =>
    Promise.reject(new Error("kill/start are not supported on a container-backed server"));
  return {
    url,
    source: "container",
    stop: async () => void (await container.stop()),
    kill: notOwned,
    start: notOwned,
  };
}

export async function findNatsServer(options: FindNatsOptions = {}): Promise<NatsServerHandle> {
  const envUrl = process.env.NATS_URL;
  if (envUrl !== undefined && envUrl !== "" && options.own !== true) {
    const notOwned = () =>
      Promise.reject(
        new Error("NATS_URL names someone else's server: it cannot be killed or restarted here"),
      );
    return { url: envUrl, source: "env", stop: async () => {}, kill: notOwned, start: notOwned };
  }
  const binary = findNatsServerBinary();
  if (binary !== undefined) return spawnBinary(binary, options.args ?? []);
  try {
    return await startContainer();
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_NATS_NOT_FOUND",
      "No NATS server with JetStream: set NATS_URL, or install nats-server (Debian/Ubuntu: `apt-get install nats-server`; " +
        "or download it from the NATS project) so it is on PATH or in /usr/sbin, or run a Docker engine for testcontainers. " +
        `(testcontainers said: ${String((error as Error)?.message ?? error)})`,
      {},
      error,
    );
  }
}
