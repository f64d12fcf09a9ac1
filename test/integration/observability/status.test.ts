/**
 * Discovery and `hookbus status` on a real NATS server: live workers per declared policy and
 * hook, a declared policy without a worker shown loudly (and `--check` failing), coordinators with
 * their call stats and log lag, and the coordinator's own once-per-change warning.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { main } from "../../../src/cli/main.js";
import { definePolicy, HOOKBUS_VERSION } from "../../../src/index.js";
import { schemaErrors } from "../../support/json-schema.js";
import { startPipeline, until, useNatsServer } from "../pipeline/harness.js";
import { discover } from "../../../src/observability/discovery.js";
import { readStatus } from "../../../src/status/read.js";

const nats = useNatsServer();

const ctx = { agentId: "agent-status", sessionKey: "s-1", runId: "r-1" };

const guard = definePolicy({
  name: "guard",
  version: "1.2.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "rm" ? { block: true, blockReason: "no rm" } : undefined,
  },
});
const ghost = definePolicy({
  name: "ghost",
  version: "0.1.0",
  hooks: { before_llm_call: () => {} },
});

const registry = {
  policies: [
    { name: "guard", hooks: ["before_tool_call"], priority: 10 },
    { name: "ghost", hooks: ["before_llm_call"], priority: 5, failMode: "fail-open" as const },
  ],
};

function memoryLogger() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line !== "") lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    output: { print: (l: string) => out.push(l), error: (l: string) => err.push(l) },
  };
}

describe("hookbus status", () => {
  it("shows live workers per policy and hook, coordinators with stats and log lag, and flags a declared policy with no worker", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard] });
    await p.client.beforeToolCall(ctx, { toolName: "ls", toolCallId: "t1", params: {} });
    await expect(
      p.client.beforeToolCall(ctx, { toolName: "rm", toolCallId: "t2", params: {} }),
    ).rejects.toThrow("no rm");

    const report = await readStatus(p.connections.reader, { namespace: p.namespace });
    expect(report.registryRevision).toBe(p.revision);
    const [guardStatus, ghostStatus] = report.policies;
    expect(guardStatus).toMatchObject({
      name: "guard",
      alive: true,
      workers: 1,
      versions: ["1.2.0"],
    });
    expect(guardStatus?.hooks).toEqual([
      {
        hook: "before_tool_call",
        workers: 1,
        stats: expect.objectContaining({ count: 2, errorRate: 0 }) as unknown,
      },
    ]);
    expect(ghostStatus).toMatchObject({ name: "ghost", alive: false, workers: 0, versions: [] });
    expect(report.problems).toEqual([expect.stringContaining('policy "ghost" has NO live worker')]);
    expect(report.coordinators).toHaveLength(1);
    const [coordinator] = report.coordinators;
    expect(coordinator).toMatchObject({
      id: p.coordinator.id,
      registryRevision: p.revision,
      callsHandled: 2,
      calls: { count: 2, errorRate: 0 },
    });
    // Two decisions written by this coordinator, nothing after them.
    expect(coordinator?.log).toMatchObject({
      lag: 0,
      lastWrittenSeq: expect.any(Number) as unknown,
    });

    const text = capture();
    const args = ["status", "--server", nats.url(), "--namespace", p.namespace];
    // Problems make it exit 1 without --check (issue 22.7), and --check still works.
    expect(await main(args, capture().output)).toBe(1);
    expect(await main([...args, "--check"], text.output)).toBe(1);
    expect(text.out.join("\n")).toMatch(/!! policy "ghost" has NO live worker/);
    expect(text.out.join("\n")).toMatch(
      /guard {2}\[enforce\] {2}1 live worker\(s\) {2}versions 1\.2\.0/,
    );

    await p.serve(ghost);
    const json = capture();
    expect(await main([...args, "--json"], json.output)).toBe(0);
    expect(json.out).toHaveLength(1); // one record per line, as every --json
    const parsed = JSON.parse(json.out[0]!) as {
      problems: string[];
      policies: { alive: boolean }[];
    };
    expect(parsed.problems).toEqual([]);
    expect(parsed.policies.map((x) => x.alive)).toEqual([true, true]);
  });

  it("a namespace without a registry is a problem: the SDK refuses every call (HOOKBUS_NO_REGISTRY)", async () => {
    const p = await startPipeline(nats.url(), {});
    const refused = await p.client
      .beforeToolCall(ctx, { toolName: "ls", toolCallId: "t1", params: {} })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "HOOKBUS_NO_REGISTRY" });
    const text = capture();
    const args = ["status", "--server", nats.url(), "--namespace", p.namespace];
    expect(await main(args, text.output)).toBe(1);
    const printed = text.out.join("\n");
    expect(printed).toContain("no registry applied");
    expect(printed).toContain(
      "!! no registry was ever applied in this namespace: agents' calls are refused (HOOKBUS_NO_REGISTRY) until one is: hookbus registry apply FILE",
    );
    expect(printed).not.toContain("every call is allowed");
  });

  it("collects every worker and coordinator that answers, within the deadline, and nothing without them", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard, guard] });
    const found = await discover(p.connections.reader, p.namespace, { maxWaitMs: 2000 });
    expect(found.replies.map((r) => r.role).sort()).toEqual(["coordinator", "worker", "worker"]);
    const workers = await discover(p.connections.reader, p.namespace, { role: "worker" });
    expect(workers.replies.every((r) => r.role === "worker")).toBe(true);
    expect(workers.replies).toHaveLength(2);

    // What crosses the wire conforms to the published contract.
    for (const role of ["worker", "coordinator"]) {
      const raw = await p.connections.reader.request(`${p.namespace}.discover.${role}`, "{}", {
        timeout: 2000,
      });
      const body: unknown = raw.json();
      expect(schemaErrors("discovery/reply.schema.json", body), role).toEqual([]);
      expect(body).toMatchObject({ role, hookbus: HOOKBUS_VERSION, pid: process.pid });
    }

    const started = Date.now();
    const none = await discover(p.connections.reader, `${p.namespace}-empty`, { maxWaitMs: 500 });
    // The server's "no responders": nothing runs (not a busy process that did not answer).
    expect(none).toEqual({ replies: [], invalid: 0, nobodyListens: true });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a coordinator logs a declared policy without a live worker once, and once more when it is back", async () => {
    const { logger, lines } = memoryLogger();
    const p = await startPipeline(nats.url(), {
      registry,
      policies: [guard],
      coordinator: { logger, livenessIntervalMs: 50 },
    });
    const missing = () =>
      lines.filter(
        (l) => l.msg === "declared policy has no live worker: its calls get its failure mode",
      );
    await until(() => missing().length > 0, 10_000, "the missing-worker warning");
    await p.serve(ghost);
    await until(
      () => lines.some((l) => l.msg === "policy has live workers again" && l.policy === "ghost"),
      10_000,
      "the recovery message",
    );
    // Many checks ran meanwhile (every 50 ms), yet the warning was logged once.
    expect(missing()).toEqual([expect.objectContaining({ policy: "ghost", level: 40 })]);
    const metrics = await p.coordinator.metrics.getSingleMetricAsString(
      "hookbus_policy_live_workers",
    );
    expect(metrics).toMatch(/policy="ghost"[^}]*} 1/);
  });
});
