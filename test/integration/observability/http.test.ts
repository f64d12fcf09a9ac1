/**
 * `--http` endpoints on a real NATS server: /metrics in Prometheus text format with the call,
 * policy, log-append and in-flight metrics of this instance only, /healthz and /readyz (which
 * turns 503 when the coordinator stops), and the CLI flag on a running coordinator process.
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { definePolicy, HookbusError } from "../../../src/index.js";
import { serveHttp } from "../../../src/observability/http.js";
import { startChild } from "../../support/child.js";
import { uniqueNamespace } from "../../support/nats.js";
import { startPipeline, until, useNatsServer } from "../pipeline/harness.js";
import { parseHttpAddress } from "../../../src/observability/http.js";

const nats = useNatsServer();
const cli = fileURLToPath(new URL("../../../bin/hookbus.js", import.meta.url));

const ctx = { agentId: "agent-http", sessionKey: "s-1", runId: "r-1" };
const guard = definePolicy({
  name: "guard",
  version: "1.0.0",
  hooks: {
    before_tool_call: (event) =>
      event.toolName === "rm" ? { block: true, blockReason: "no rm" } : undefined,
  },
});
const broken = definePolicy({
  name: "broken",
  hooks: {
    before_tool_call: () => {
      throw new Error("boom");
    },
  },
});
const registry = {
  policies: [
    { name: "guard", hooks: ["before_tool_call"], priority: 10 },
    { name: "broken", hooks: ["before_tool_call"], priority: 5, failMode: "fail-open" as const },
    { name: "absent", hooks: ["before_tool_call"], priority: 1, failMode: "fail-open" as const },
  ],
};

/** The value of one sample of a Prometheus text body, whatever the order of its labels. */
function sample(body: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of body.split("\n")) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const have = new Map([...match[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(match[3]);
  }
  return undefined;
}

async function get(url: string): Promise<{ status: number; type: string; body: string }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return {
    status: res.status,
    type: res.headers.get("content-type") ?? "",
    body: await res.text(),
  };
}

describe("metrics and health endpoints", () => {
  it("a coordinator's /metrics counts calls by hook and outcome, policies by status, log appends; /readyz follows its life", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard, broken] });
    const coordinator = p.coordinator;
    const http = await serveHttp({
      address: "127.0.0.1:0",
      metrics: () => coordinator.metrics,
      ready: () => coordinator.ready(),
    });
    try {
      await p.client.beforeToolCall(ctx, { toolName: "ls", toolCallId: "t1", params: {} });
      await expect(
        p.client.beforeToolCall(ctx, { toolName: "rm", toolCallId: "t2", params: {} }),
      ).rejects.toThrow("no rm");

      const metrics = await get(`${http.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
      const value = (name: string, labels: Record<string, string>) =>
        sample(metrics.body, name, labels);
      const calls = "hookbus_call_duration_seconds_count";
      expect(value(calls, { hook: "before_tool_call", outcome: "allow" })).toBe(1);
      expect(value(calls, { hook: "before_tool_call", outcome: "block" })).toBe(1);
      const statuses = "hookbus_policy_outcomes_total";
      const hook = "before_tool_call";
      expect(value(statuses, { policy: "guard", hook, status: "ok" })).toBe(2);
      expect(value(statuses, { policy: "broken", hook, status: "error" })).toBe(2);
      expect(value(statuses, { policy: "absent", hook, status: "unavailable" })).toBe(2);
      const policyLatency = "hookbus_policy_duration_seconds_count";
      expect(value(policyLatency, { policy: "guard", hook, status: "ok" })).toBe(2);
      expect(value("hookbus_log_append_duration_seconds_count", { result: "ok" })).toBe(2);
      expect(value("hookbus_calls_in_flight", {})).toBe(0);
      expect(metrics.body).toContain(`instance_id="${coordinator.id}"`);

      expect(await get(`${http.url}/healthz`)).toMatchObject({ status: 200, body: "ok\n" });
      const ready = await get(`${http.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(JSON.parse(ready.body)).toEqual({ ready: true, reasons: [] });
      expect((await get(`${http.url}/nope`)).status).toBe(404);

      await coordinator.stop();
      const stopped = await get(`${http.url}/readyz`);
      expect(stopped.status).toBe(503);
      expect(JSON.parse(stopped.body)).toEqual({ ready: false, reasons: ["stopping"] });
      expect((await get(`${http.url}/healthz`)).status).toBe(200);
    } finally {
      await http.close();
    }
  });

  it("a worker's /metrics has its per-hook handler latency and statuses, separate from another instance", async () => {
    const p = await startPipeline(nats.url(), { registry, policies: [guard, broken] });
    await p.client.beforeToolCall(ctx, { toolName: "ls", toolCallId: "t1", params: {} });
    const [guardRunner, brokenRunner] = p.runners;
    const guardText = await guardRunner!.metrics.metrics();
    const brokenText = await brokenRunner!.metrics.metrics();
    const handled = "hookbus_worker_handler_duration_seconds_count";
    const hook = "before_tool_call";
    expect(sample(guardText, handled, { policy: "guard", hook, status: "ok" })).toBe(1);
    expect(guardText).not.toContain('policy="broken"');
    expect(sample(brokenText, handled, { policy: "broken", hook, status: "error" })).toBe(1);
    expect(guardRunner!.ready()).toEqual({ ready: true, reasons: [] });
  });

  it("refuses a malformed --http address and an address in use with coded errors", async () => {
    expect(() => parseHttpAddress("9464")).toThrow(HookbusError);
    expect(() => parseHttpAddress("localhost:99999")).toThrow(/HOST:PORT/);
    expect(parseHttpAddress("[::1]:9464")).toEqual({ host: "::1", port: 9464 });
    const first = await serveHttp({
      address: "127.0.0.1:0",
      metrics: () => undefined,
      ready: () => ({ ready: true, reasons: [] }),
    });
    try {
      const taken = first.url.replace("http://", "");
      await expect(
        serveHttp({
          address: taken,
          metrics: () => undefined,
          ready: () => ({ ready: true, reasons: [] }),
        }),
      ).rejects.toMatchObject({ code: "HOOKBUS_HTTP_UNAVAILABLE" });
    } finally {
      await first.close();
    }
  });

  it("hookbus coordinator --http serves the endpoints from the running process", async () => {
    const namespace = uniqueNamespace("http");
    const child = startChild(
      [
        cli,
        "coordinator",
        "--server",
        nats.url(),
        "--namespace",
        namespace,
        "--http",
        "127.0.0.1:0",
      ],
      { LOG_LEVEL: "info" },
    );
    try {
      const url = await until(
        () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(child.output())?.[1],
        20_000,
        "the endpoints' url in the log",
      );
      await until(async () => (await get(`${url}/readyz`)).status === 200, 20_000, "/readyz 200");
      const metrics = await get(`${url}/metrics`);
      expect(metrics.body).toContain("# TYPE hookbus_call_duration_seconds histogram");
      expect(metrics.body).toContain("hookbus_process_cpu_user_seconds_total");
    } finally {
      child.child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
    }
  });

  it("hookbus worker serves them too, from HOOKBUS_HTTP, and reports its policy's handler metrics", async () => {
    const namespace = uniqueNamespace("http");
    const policyModule = fileURLToPath(
      new URL("../../../services/policies/tool-policy.ts", import.meta.url),
    );
    const child = startChild(
      [
        cli,
        "worker",
        policyModule,
        "--server",
        nats.url(),
        "--namespace",
        namespace,
        "--state",
        "memory",
      ],
      { LOG_LEVEL: "info", HOOKBUS_HTTP: "127.0.0.1:0" },
    );
    try {
      const url = await until(
        () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(child.output())?.[1],
        20_000,
        "the endpoints' url in the log",
      );
      await until(async () => (await get(`${url}/readyz`)).status === 200, 20_000, "/readyz 200");
      const metrics = await get(`${url}/metrics`);
      expect(metrics.body).toContain("# TYPE hookbus_worker_handler_duration_seconds histogram");
      expect(sample(metrics.body, "hookbus_worker_in_flight", { role: "worker" })).toBe(0);
    } finally {
      child.child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
    }
  });
});
