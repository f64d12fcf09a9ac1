/**
 * `hookbus indexer` started before any coordinator has created the log (a fresh deployment whose
 * supervisor starts every role at once) waits for it instead of exiting 1, then indexes what
 * arrives; one that meets a server whose JetStream does not answer yet (a restart during a
 * recovery) retries opening the bus too; a missing database still exits at once, saying how to
 * create it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Bus } from "../../../src/bus/bus.js";
import type { PgPool } from "../../../src/indexer/index.js";
import { freePort } from "../../../src/testing/free-port.js";
import { findNatsServerBinary, waitForPort } from "../../../src/testing/nats.js";
import { publishSyntheticLog } from "../../support/synthetic-log.js";
import { startChild } from "../../support/child.js";
import { connectTo, uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const postgres = usePostgres();

describe("hookbus indexer's start", () => {
  it("waits for a log no coordinator has created yet, then indexes it", async () => {
    const namespace = uniqueNamespace("idxwait");
    const { url: indexUrl, pool } = await postgres.database();
    const child = startIndexerChild(nats.url(), namespace, indexUrl);
    try {
      // It tried, found no log, and is still running: retrying, not exited.
      await untilRetrying(child);
      const bus = await Bus.open(await nats.connect(), { namespace });
      await publishSyntheticLog(bus, { records: 40, sessions: 4, agents: 1 });
      await untilIndexed(pool, namespace, 40);
    } finally {
      child.child.kill("SIGTERM");
      await child.exited;
    }
  });

  it("retries a JetStream that does not answer yet, then indexes once it does", async () => {
    const binary = findNatsServerBinary();
    if (binary === undefined) throw new Error("nats-server is not on PATH");
    const port = await freePort();
    const url = `nats://127.0.0.1:${port}`;
    const store = await mkdtemp(join(tmpdir(), "hookbus-idxjs-"));
    // First a server without JetStream: opening the bus asks `$JS.API.INFO`, which nobody answers.
    let server = await startServer(binary, ["-a", "127.0.0.1", "-p", String(port)], port);
    const namespace = uniqueNamespace("idxjs");
    const { url: indexUrl, pool } = await postgres.database();
    const child = startIndexerChild(url, namespace, indexUrl, ["--connect-wait", "120000"]);
    try {
      await untilRetrying(child);
      await stopServer(server);
      server = await startServer(
        binary,
        ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", store],
        port,
      );
      const nc = await connectTo(url);
      try {
        await publishSyntheticLog(await Bus.open(nc, { namespace }), {
          records: 20,
          sessions: 2,
          agents: 1,
        });
        await untilIndexed(pool, namespace, 20);
      } finally {
        await nc.close();
      }
    } finally {
      child.child.kill("SIGTERM");
      await child.exited;
      await stopServer(server);
      await rm(store, { recursive: true, force: true });
    }
  });

  it("exits at once on a database that does not exist, saying how to create it", async () => {
    const { url } = await postgres.database();
    const missing = url.replace(/\/[^/]+$/, "/hookbus_no_such_db");
    const child = startChild(["--import", "tsx", "services/indexer.ts"], {
      NATS_URL: nats.url(),
      HOOKBUS_NAMESPACE: uniqueNamespace("idxmissing"),
      HOOKBUS_INDEX_URL: missing,
    });
    const code = await child.exited;
    expect(code).toBe(1);
    expect(child.output() + child.errors()).toContain("does not exist");
  });
});

async function startServer(binary: string, args: string[], port: number): Promise<ChildProcess> {
  const server = spawn(binary, args, { stdio: "ignore" });
  await waitForPort(port);
  return server;
}

async function stopServer(server: ChildProcess): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  const exited = new Promise((resolve) => server.once("exit", resolve));
  server.kill("SIGTERM");
  await exited;
}

function startIndexerChild(
  natsUrl: string,
  namespace: string,
  indexUrl: string,
  flags: string[] = [],
) {
  return startChild(["--import", "tsx", "services/indexer.ts", "--batch", "10", ...flags], {
    NATS_URL: natsUrl,
    HOOKBUS_NAMESPACE: namespace,
    HOOKBUS_INDEX_URL: indexUrl,
    LOG_LEVEL: "info",
  });
}

/** The start failed, is being retried, and the process is still running (not exited). */
async function untilRetrying(child: ReturnType<typeof startChild>): Promise<void> {
  await until(
    () => child.output().includes("indexer start: JetStream did not answer, retrying"),
    30_000,
    "a retried start in the log",
  );
  expect(child.child.exitCode).toBeNull();
}

async function untilIndexed(pool: PgPool, namespace: string, records: number): Promise<void> {
  await until(
    async () => {
      const r = await pool.query<{ n: string }>(
        "SELECT count(*) AS n FROM hookbus_records WHERE ns = $1",
        [namespace],
      );
      return r.rows[0]?.n === String(records);
    },
    60_000,
    `the ${records} records indexed`,
  );
}
