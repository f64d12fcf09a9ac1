/**
 * `hookbus ui` as the auditor: the configuration `hookbus auth` writes, on a real nats-server;
 * the UI runs as its own process (the CLI, `--nkey` and `--inbox-prefix` of the generated auditor)
 * with a real PostgreSQL index kept by the generated indexer user. Its pages read the index and
 * its live tail follows the log with only the auditor's read permissions; SIGTERM stops it.
 */
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  Bus,
  definePolicy,
  HookbusClient,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import { startIndexer, type Indexer } from "../../../src/indexer/index.js";
import { startChild, type Child } from "../../support/child.js";
import { uniqueNamespace } from "../../support/nats.js";
import { usePostgres } from "../../support/postgres.js";
import { until } from "../../support/wait.js";
import { useAuthServer } from "../auth/harness.js";
import { RegistryStore } from "../../../src/registry/store.js";
import { StopStore } from "../../../src/registry/stops.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";

const ns = uniqueNamespace("uiauth");
const server = useAuthServer({
  namespace: ns,
  agents: ["agent-a"],
  policies: ["p1"],
  coordinators: ["c1"],
  operators: ["ops"],
  auditors: ["aud"],
  indexers: ["idx1"],
});
const postgres = usePostgres();
const BIN = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

const p1 = definePolicy({
  name: "p1",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "exec" ? { block: true, blockReason: "p1: no exec" } : undefined,
  },
});

let coordinator: Coordinator;
let runner: PolicyRunner;
let client: HookbusClient;
let indexer: Indexer;
let ui: Child;
let uiUrl: string;

function call(toolName: string, callId: string) {
  const ctx = { agentId: "agent-a", sessionKey: "s-1", runId: "r-1", toolCallId: callId };
  return client.call(
    "before_tool_call",
    ctx,
    { toolName, toolCallId: callId, params: {} },
    { callId },
  );
}

beforeAll(async () => {
  const store = await RegistryStore.open(await server.as("operator", "ops"), new Subjects(ns));
  await store.apply({ policies: [{ name: "p1", hooks: ["before_tool_call"], priority: 20 }] });
  coordinator = await startCoordinator({
    nc: await server.as("coordinator", "c1"),
    namespace: ns,
    id: "c1",
  });
  runner = await runPolicy(p1, { nc: await server.as("worker", "p1"), namespace: ns });
  client = await HookbusClient.connect({
    nc: await server.as("agent", "agent-a"),
    namespace: ns,
    timeoutMs: 10_000,
  });
  await until(() => coordinator.registry().revision >= 1, 10_000, "coordinator sees registry");
  expect((await call("exec", "call-1")).decision.outcome).toBe("block");

  const { url, pool } = await postgres.database();
  const indexerBus = await Bus.open(await server.as("indexer", "idx1"), { namespace: ns });
  indexer = await startIndexer({ bus: indexerBus, pool });
  await until(async () => (await indexer.lag()).records === 0, 20_000, "the index caught up");

  const aud = server.generated().users.find((u) => u.role === "auditor")!;
  ui = startChild(
    [
      BIN,
      "ui",
      ...["--index", url, "--port", "0", "--namespace", ns, "--server", server.url()],
      ...["--nkey", aud.keyFile, "--inbox-prefix", aud.inboxPrefix, "--log-level", "warn"],
    ],
    { HOOKBUS_CLI_SOURCE: "1" },
  );
  await until(
    () => /hookbus ui: (http:\/\/\S+)\//.test(ui.output()) || ui.child.exitCode !== null,
    60_000,
    "hookbus ui listening",
  );
  const printed = /hookbus ui: (http:\/\/\S+)\//.exec(ui.output());
  if (printed === null) throw new Error(`hookbus ui did not start: ${ui.errors()}`);
  uiUrl = printed[1]!;
  expect(uiUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
}, 120_000);

afterAll(async () => {
  if (ui !== undefined && ui.child.exitCode === null) {
    ui.child.kill("SIGKILL");
    await ui.exited;
  }
  await indexer?.stop();
  await client?.close();
  await runner?.stop();
  await coordinator?.stop();
}, 30_000);

describe("hookbus ui with the auditor's credentials", () => {
  it("lists the emergency stops in force (read with the auditor's rights)", async () => {
    expect(await (await fetch(`${uiUrl}/stops`)).text()).toContain(
      "No emergency stop is in force.",
    );
    const stops = await StopStore.open(await server.as("operator", "ops"), new Subjects(ns));
    const at = new Date().toISOString();
    const change = { kind: "tool", name: "rm_rf", by: "alice", at, reason: "<drill>" } as const;
    await stops.change({ action: "stop", ...change });
    const page = await (await fetch(`${uiUrl}/stops`)).text();
    expect(page).toContain("<code>rm_rf</code>");
    expect(page).toContain("&lt;drill&gt;");
    expect(page).toContain("hookbus resume tool rm_rf");
    await stops.change({ action: "resume", ...change });
  });

  it("shows the registry's revisions, each entry's kind, a Cedar set's source and hash, and the diff", async () => {
    const store = await RegistryStore.open(await server.as("operator", "ops"), new Subjects(ns));
    const before = await store.current();
    const cedar = `@id("no-rocket") @reason("<no rockets>")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.name == "launch_rocket" };`;
    const second = await store.apply({
      policies: [
        { name: "p1", hooks: ["before_tool_call"], priority: 20 },
        { name: "rockets", kind: "cedar", hooks: ["before_tool_call"], priority: 30, cedar },
      ],
    });
    const current = await (await fetch(`${uiUrl}/registry`)).text();
    expect(current).toContain(`Revision ${second.revision}`);
    expect(current).toMatch(/<td><b>rockets<\/b><\/td>\s*<td>cedar<\/td>/);
    expect(current).toContain("&lt;no rockets&gt;"); // the source, as text
    expect(current).toContain(`sha256:${createHash("sha256").update(cedar).digest("hex")}`);
    expect(current).toMatch(/\+ rockets\s+\(before_tool_call, priority 30, enforce\)/);
    // The stop list shares the bucket, so revisions are not consecutive: the diff names the one before.
    expect(current).toContain(`against registry revision ${before.revision}:`);
    const first = await (await fetch(`${uiUrl}/registry?revision=${before.revision}`)).text();
    expect(first).toContain(`Revision ${before.revision}`);
    expect(first).not.toContain("rockets</b>");
    const missing = await fetch(`${uiUrl}/registry?revision=999999`);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain("HOOKBUS_INVALID_ARGUMENT");
  });

  it("serves the indexed records, tails the log, and stops on SIGTERM", async () => {
    const search = await (await fetch(`${uiUrl}/?agent=agent-a`)).text();
    expect(search).toContain("blocked by p1: p1: no exec");
    // The record page reads the same sequence from the log: a direct get the auditor may make.
    const record = await (await fetch(`${uiUrl}/decision?seq=1`)).text();
    expect(record).toContain("holds this record as shown");

    const controller = new AbortController();
    const tail = await fetch(`${uiUrl}/api/tail?agent=agent-a`, { signal: controller.signal });
    expect(tail.status).toBe(200);
    expect(tail.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = tail.body!.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    let received = "";
    const read = (async () => {
      const decoder = new TextDecoder();
      while (!received.includes('"call":"call-2"')) {
        const { value, done } = await reader.read();
        if (done) break;
        received += decoder.decode(value, { stream: true });
      }
    })();
    await until(() => received.includes(": tail open"), 20_000, "the tail is open");
    expect((await call("read_file", "call-2")).decision.outcome).toBe("allow");
    await read;
    controller.abort();
    const event = received.split("\n\n").find((e) => e.includes('"call":"call-2"'));
    expect(event).toMatch(/^id: \d+\ndata: /);
    const row = JSON.parse(event!.split("\ndata: ")[1]!) as { agent: string; outcome: string };
    expect(row).toMatchObject({ agent: "agent-a", outcome: "allow" });

    ui.child.kill("SIGTERM");
    expect(await ui.exited).toBe(0);
  }, 60_000);
});
