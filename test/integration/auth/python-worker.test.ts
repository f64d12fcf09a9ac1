/**
 * Issue 31, item 5: the Python worker runs as a user `hookbus auth` generates. On a nats-server
 * configured with that description, `hookbus-worker --nkey … --inbox-prefix …` decides calls
 * (blocks, session state in JetStream KV, a large body through the blob store), handles an
 * observation through its durable consumer, and answers discovery; without its key the
 * server refuses it and the worker exits at once with HOOKBUS_NATS_AUTH.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes, createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HookbusClient } from "../../../src/index.js";
import { encodeToken } from "../../../src/bus/tokens.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { discover, workersByPolicy } from "../../../src/observability/discovery.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { uniqueNamespace } from "../../support/nats.js";
import { until } from "../../support/wait.js";
import { useAuthServer } from "./harness.js";

const WORKER = ".tools/python/bin/hookbus-worker";
const POLICY_FILE = "examples/python/conformance_policy.py:conformance";
const present = existsSync(WORKER);
if (!present) console.warn(`python-worker.test.ts skipped: no ${WORKER} (bash scripts/setup.sh)`);

const ns = uniqueNamespace("pyauth");
const s = new Subjects(ns);
const server = useAuthServer({
  namespace: ns,
  agents: ["agent-a"],
  policies: ["conformance"],
  coordinators: ["c1"],
  operators: ["ops"],
});

let coordinator: Coordinator | undefined;
let client: HookbusClient | undefined;
let worker: ChildProcess | undefined;
let output = "";

function workerUser() {
  return server.generated().users.find((u) => u.role === "worker")!;
}

function ask(toolName: string, params: Record<string, unknown>, sessionKey = "s-1") {
  const ctx = { agentId: "agent-a", sessionKey, runId: "r-1", toolName, toolCallId: toolName };
  return client!.decide("before_tool_call", ctx, { toolName, toolCallId: toolName, params });
}

beforeAll(async () => {
  if (!present) return;
  const ops = await server.as("operator", "ops");
  await (
    await RegistryStore.open(ops, s)
  ).apply({
    policies: [
      {
        name: "conformance",
        hooks: ["before_tool_call"],
        priority: 10,
        timeoutMs: 5000,
        failMode: "fail-closed",
      },
    ],
  });
  coordinator = await startCoordinator({
    nc: await server.as("coordinator", "c1"),
    namespace: ns,
    id: "c1",
  });
  const user = workerUser();
  // As an operator deploys it: the seed file and prefix `hookbus auth` wrote, nothing else.
  worker = spawn(
    WORKER,
    [
      POLICY_FILE,
      "--nkey",
      user.keyFile,
      "--inbox-prefix",
      user.inboxPrefix,
      "--log-level",
      "warning",
    ],
    { env: { ...process.env, NATS_URL: server.url(), HOOKBUS_NAMESPACE: ns }, stdio: "pipe" },
  );
  worker.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  worker.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  client = await HookbusClient.connect({
    nc: await server.as("agent", "agent-a"),
    namespace: ns,
    timeoutMs: 10_000,
  });
  await until(
    async () => workersByPolicy((await discover(ops, ns)).replies).has("conformance"),
    30_000,
    "the Python worker answering discovery",
  );
}, 60_000);

afterAll(async () => {
  worker?.kill("SIGTERM");
  await client?.close();
  await coordinator?.stop();
}, 30_000);

describe.skipIf(!present)("the Python worker as a user hookbus auth generated", () => {
  it("blocks, keeps session state and reads a blob-stored body under its own permissions", async () => {
    const blocked = await ask("conformance_verdict", {
      verdict: { block: true, blockReason: "python says no" },
    });
    expect(blocked, output).toMatchObject({ outcome: "block", blockReason: "python says no" });

    const counts = [await ask("conformance_count", {}), await ask("conformance_count", {})];
    expect(
      counts.map((d) => d.params),
      output,
    ).toEqual([{ count: 1 }, { count: 2 }]);

    // Incompressible and over 1 MiB gzipped: the agent stores it as a blob, the worker reads it.
    const text = randomBytes(1_200_000).toString("base64");
    const digest = await ask("conformance_digest", { text });
    expect(digest.params, output).toEqual({
      sha256: createHash("sha256").update(text).digest("hex"),
      bytes: text.length,
    });
  }, 60_000);

  it("handles an observation through its durable consumer and answers discovery", async () => {
    const ctx = { agentId: "agent-a", sessionKey: "s-obs", runId: "r-1", toolName: "read_file" };
    await client!.observe(
      "after_tool_call",
      { ...ctx, toolCallId: "t-1" },
      { toolName: "read_file", toolCallId: "t-1", params: {}, result: "ok", durationMs: 1 },
      { eventId: "obs-1" },
    );
    // Read back as the worker's own user: its keys are the only ones it may read.
    const kv = await new Kvm(jetstream(await server.as("worker", "conformance"))).open(
      s.stateBucket,
    );
    const key = `conformance.${encodeToken("s-obs")}.observed`;
    await until(
      async () => (await kv.get(key))?.string().includes("obs-1") === true,
      20_000,
      "the observation handled",
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}; worker output:\n${output}`);
    });

    const found = await discover(await server.as("operator", "ops"), ns, { role: "worker" });
    expect(found.invalid).toBe(0);
    const described = found.replies.find((r) => r.role === "worker");
    expect(described).toMatchObject({ role: "worker", namespace: ns });
    if (described?.role !== "worker") throw new Error("no worker description");
    expect(described.policies[0]).toMatchObject({ name: "conformance", version: "1.0.0" });
    expect(described.policies[0]!.stats["before_tool_call"]!.count).toBeGreaterThanOrEqual(4);
  }, 60_000);

  it("without its key the server refuses it, and it exits at once with HOOKBUS_NATS_AUTH", () => {
    const started = Date.now();
    const run = spawnSync(WORKER, [POLICY_FILE, "--nats", server.url(), "--namespace", ns], {
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, HOOKBUS_NKEY_FILE: "", HOOKBUS_NKEY_SEED: "", NATS_CREDS: "" },
    });
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain("hookbus-worker: HOOKBUS_NATS_AUTH");
    expect(Date.now() - started).toBeLessThan(15_000); // not the 30 s connect wait
  }, 40_000);
});
