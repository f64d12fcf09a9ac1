/**
 * Issue 33.1: `hookbus status` tells the truth about a mixed deployment, on a real NATS server
 * with a real coordinator. A TypeScript worker, a worker written against the wire protocol alone
 * (as a Python or Go worker is: raw subscriptions, a hand-built discovery answer with fields of its
 * own) and a Cedar set the coordinator evaluates: healthy, exit 0. A Cedar set that does not load
 * in the coordinator: exit 1, naming the coordinator and the command that fixes it.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { definePolicy } from "../../../src/index.js";
import { cedarSetHash } from "../../../src/cedar/set-hash.js";
import { readStatus } from "../../../src/status/read.js";
import { startPipeline, until, useNatsServer, type Pipeline } from "../pipeline/harness.js";

const nats = useNatsServer();
const ctx = { agentId: "agent-mixed", sessionKey: "s-1", runId: "r-1" };

const guard = definePolicy({
  name: "guard",
  version: "1.0.0",
  hooks: { before_tool_call: () => undefined },
});
const RULES = `@id("no-exec") @reason("no shell here")
forbid (principal, action == Action::"before_tool_call", resource is Tool)
when { resource.class == "shell" };`;

const registry = {
  policies: [
    { name: "guard", hooks: ["before_tool_call"], priority: 10 },
    { name: "foreign", hooks: ["before_tool_call"], priority: 5 },
    {
      name: "rules",
      kind: "cedar" as const,
      cedar: RULES,
      hooks: ["before_tool_call"],
      priority: 20,
    },
  ],
};

/**
 * A worker of another language, reduced to the protocol (docs/protocol.md): it answers its policy
 * subject in its queue group with "no opinion", and discovery with a description built by hand,
 * carrying a field the TypeScript SDK does not send.
 */
async function foreignWorker(nc: NatsConnection, namespace: string): Promise<{ asked: number }> {
  const seen = { asked: 0 };
  nc.subscribe(`${namespace}.policy.foreign.*`, {
    queue: `${namespace}-policy-foreign`,
    callback: (_error, msg) => {
      seen.asked++;
      msg.respond(JSON.stringify({ policy: "foreign", version: "py-2.0" }));
    },
  });
  const description = JSON.stringify({
    role: "worker",
    id: "python-worker-1",
    hookbus: "0.1.0",
    namespace,
    host: "elsewhere",
    pid: 4242,
    startedAt: new Date().toISOString(),
    inFlight: 0,
    sdk: "python",
    policies: [{ name: "foreign", version: "py-2.0", hooks: ["before_tool_call"], stats: {} }],
  });
  for (const subject of [`${namespace}.discover`, `${namespace}.discover.worker`])
    nc.subscribe(subject, { callback: (_error, msg) => void msg.respond(description) });
  await nc.flush();
  return seen;
}

async function status(p: Pipeline, ...extra: string[]) {
  const lines: string[] = [];
  const out = { print: (l: string) => lines.push(l), error: (l: string) => lines.push(l) };
  const code = await main(
    ["status", "--server", nats.url(), "--namespace", p.namespace, ...extra],
    out,
  );
  return { code, text: lines.join("\n") };
}

const pipelines: Pipeline[] = [];
afterAll(async () => {
  for (const p of pipelines.splice(0)) await p.stop();
});

describe("hookbus status on a deployment of TypeScript, other-language and Cedar policies", () => {
  it("reports it healthy and exits 0; each Cedar set confirmed by hash in the coordinator", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard] });
    pipelines.push(p);
    const foreign = await foreignWorker(p.connections.workers, p.namespace);
    await p.client.beforeToolCall(ctx, { toolName: "read_file", toolCallId: "t1", params: {} });
    await expect(
      p.client.beforeToolCall(ctx, { toolName: "exec", toolCallId: "t2", params: {} }),
    ).rejects.toThrow("no shell here");
    expect(foreign.asked).toBeGreaterThanOrEqual(1);

    const result = await status(p);
    expect(result.text).not.toContain("!!");
    expect(result.code).toBe(0);
    const hash = cedarSetHash(RULES);
    expect(result.text).toContain(
      `rules  [enforce]  Cedar set ${hash.slice(0, 19)}…  loaded in 1 of 1 coordinator(s)`,
    );
    expect(result.text).toMatch(/foreign {2}\[enforce\] {2}1 live worker\(s\) {2}versions py-2\.0/);
    expect(result.text).toMatch(/guard {2}\[enforce\] {2}1 live worker\(s\) {2}versions 1\.0\.0/);

    const report = await readStatus(p.connections.reader, { namespace: p.namespace });
    expect(report.invalidReplies).toBe(0);
    expect(report.coordinators[0]?.cedar).toEqual([{ policy: "rules", state: "loaded", hash }]);
    expect(report.policies.map((x) => [x.name, x.kind, x.alive])).toEqual([
      ["guard", "worker", true],
      ["foreign", "worker", true],
      ["rules", "cedar", true],
    ]);
  });

  it("a Cedar set that does not load in the coordinator exits 1, naming it and the fix", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard] });
    pipelines.push(p);
    await foreignWorker(p.connections.workers, p.namespace);
    // Stored without `registry apply`'s check (as a writer of the bucket could): the coordinator
    // refuses to load it, and every call to its hook gets the failure mode.
    const broken = "forbid (principal, action, resource) when { context.nope.";
    const revision = await p.apply({
      policies: registry.policies.map((e) => (e.name === "rules" ? { ...e, cedar: broken } : e)),
    });
    await until(
      async () =>
        (await readStatus(p.connections.reader, { namespace: p.namespace })).coordinators[0]
          ?.registryRevision === revision || undefined,
      5000,
      `the coordinator on revision ${revision}`,
    );
    const result = await status(p);
    expect(result.code).toBe(1);
    expect(result.text).toMatch(
      new RegExp(
        `!! Cedar policy "rules" in coordinator "${p.coordinator.id}" does not load \\(HOOKBUS_[A-Z_]+: .*\\): every call to before_tool_call gets its failure mode .*hookbus registry apply FILE`,
      ),
    );
    expect(result.text).toContain("NOT CONFIRMED: loaded in 0 of 1 coordinator(s)");
    expect(result.text).not.toContain("NO LIVE WORKER");
  });

  it("a coordinator that listens but does not answer is reported busy, not absent", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard] });
    pipelines.push(p);
    await p.coordinator.stop();
    const absent = await status(p);
    expect(absent.code).toBe(1);
    expect(absent.text).toContain(
      "!! no coordinator is alive: agents' calls fail; start one: hookbus coordinator",
    );
    // What a coordinator whose event loop a load holds looks like from outside: subscribed, silent.
    const silent = p.connections.workers.subscribe(`${p.namespace}.discover.coordinator`);
    await p.connections.workers.flush();
    const busy = await status(p);
    silent.unsubscribe();
    expect(busy.code).toBe(1);
    expect(busy.text).toContain(
      "!! no coordinator answered, yet something listens for coordinators: one may be busy",
    );
    expect(busy.text).not.toContain("no coordinator is alive");
  });
});
