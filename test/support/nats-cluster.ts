/**
 * A three-node JetStream cluster on loopback for tests and the chaos suite: each node its own
 * client and route port and store folder, so a test may SIGKILL one node and start it again.
 * Needs the nats-server binary (2.9 or newer); no container fallback.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { HookbusError } from "../../src/foundation/errors.js";
import { findNatsServerBinary, waitForPort } from "../../src/testing/nats.js";
import { freePort } from "../../src/testing/free-port.js";

export interface ClusterNode {
  /** The server_name, as JetStream reports stream leaders. */
  name: string;
  url: string;
  /** The node's HTTP monitoring endpoint (`/healthz`, `/jsz`, `/connz`). */
  monitorUrl: string;
  /** SIGKILL, store kept. */
  kill(): Promise<void>;
  /** Send a signal (SIGUSR2: lame-duck mode); false when the node is not running. */
  signal(signal: NodeJS.Signals): boolean;
  /** Resolves when the node's process has exited (at once when it is not running). */
  exited(): Promise<void>;
  /** Start again with the same ports and store. */
  start(): Promise<void>;
  running(): boolean;
}

export interface NatsCluster {
  nodes: readonly ClusterNode[];
  /** Every node's URL, for connections that fail over. */
  urls(): string[];
  node(name: string): ClusterNode;
  /** Resolves once JetStream answers through every running node (a meta leader is elected). */
  ready(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  const binary = findNatsServerBinary();
  if (binary === undefined) {
    throw new HookbusError(
      "HOOKBUS_NATS_NOT_FOUND",
      "a NATS cluster needs the nats-server binary on PATH (or NATS_SERVER_BIN)",
    );
  }
  const root = await mkdtemp(join(tmpdir(), "hookbus-cluster-"));
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({
      client: await freePort(),
      route: await freePort(),
      http: await freePort(),
    })),
  );
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`);
  const nodes: ClusterNode[] = [];
  for (const [i, port] of ports.entries()) {
    const name = `n${i + 1}`;
    const config = join(root, `${name}.conf`);
    await writeFile(
      config,
      [
        `server_name: ${name}`,
        `listen: 127.0.0.1:${port.client}`,
        `http: 127.0.0.1:${port.http}`,
        `jetstream { store_dir: ${JSON.stringify(join(root, name))}, max_mem: 64MB, max_file: 2GB }`,
        `cluster { name: hookbus, listen: 127.0.0.1:${port.route}, routes: [${routes.join(", ")}] }`,
      ].join("\n"),
    );
    let child: ChildProcess | undefined;
    let output = "";
    nodes.push({
      name,
      url: `nats://127.0.0.1:${port.client}`,
      monitorUrl: `http://127.0.0.1:${port.http}`,
      running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
      signal: (signal) => child !== undefined && child.exitCode === null && child.kill(signal),
      exited() {
        const proc = child;
        if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) {
          return Promise.resolve();
        }
        return new Promise<void>((resolve) => proc.once("exit", () => resolve()));
      },
      async start() {
        output = "";
        const proc = spawn(binary, ["-c", config], { stdio: ["ignore", "pipe", "pipe"] });
        proc.stdout?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
        proc.stderr?.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
        child = proc;
        const exited = new Promise<never>((_, reject) =>
          proc.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${output}`))),
        );
        exited.catch(() => {});
        await Promise.race([waitForPort(port.client), exited]);
      },
      async kill() {
        const proc = child;
        child = undefined;
        if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
        await new Promise<void>((resolve) => {
          proc.once("exit", () => resolve());
          proc.kill("SIGKILL");
        });
      },
    });
  }
  await Promise.all(nodes.map((n) => n.start()));

  const cluster: NatsCluster = {
    nodes,
    urls: () => nodes.map((n) => n.url),
    node(name) {
      const found = nodes.find((n) => n.name === name);
      if (found === undefined) throw new Error(`no cluster node ${name}`);
      return found;
    },
    async ready(timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      for (const node of nodes.filter((n) => n.running())) {
        const nc = await connect({ servers: node.url, timeout: 2000 });
        try {
          for (;;) {
            try {
              const jsm = await jetstreamManager(nc, { timeout: 2000 });
              await jsm.getAccountInfo();
              break;
            } catch (error) {
              if (Date.now() > until) throw error;
              await new Promise((r) => setTimeout(r, 200));
            }
          }
        } finally {
          await nc.close();
        }
      }
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      await rm(root, { recursive: true, force: true });
    },
  };
  await cluster.ready();
  return cluster;
}
