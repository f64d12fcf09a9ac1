/**
 * Issue 33, item 4: the emergency-stop sequence as a library function, with the CLI's guarantee.
 * On a real nats-server with two coordinators: when `applyEmergencyStop` resolves, both report
 * the new stop list, the agents' staleness bound has passed since the change was stored, and a
 * call of the stopped tool is blocked by the emergency stop; resuming what is not stopped stores
 * nothing; with no coordinator left, the change is stored but not reported as enforced.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/transport-node";
import { HookbusClient } from "../../../src/index.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";
import { Subjects } from "../../../src/bus/subjects.js";
import { applyEmergencyStop, RegistryStore, StopStore } from "../../../src/registry/index.js";
import { uniqueNamespace, useNatsServer } from "../../support/nats.js";
import { until } from "../../support/wait.js";

const nats = useNatsServer();
const namespace = uniqueNamespace("estoplib");
const subjects = new Subjects(namespace);
const coordinators: Coordinator[] = [];
let nc: NatsConnection;
let client: HookbusClient;

const change = (action: "stop" | "resume", name: string) => ({
  action,
  kind: "tool" as const,
  name,
  by: "library-test",
  at: new Date().toISOString(),
  reason: "incident 33",
});

let seq = 0;
async function callTool(tool: string) {
  const callId = `lib-${tool}-${++seq}`;
  const context = {
    agentId: "a1",
    sessionKey: "s",
    runId: "r",
    toolName: tool,
    toolCallId: callId,
  };
  const event = { toolName: tool, toolCallId: callId, params: {} };
  return client.call("before_tool_call", context, event, { callId });
}

beforeAll(async () => {
  nc = await nats.connect("test");
  await (await RegistryStore.open(nc, subjects)).apply({ policies: [] });
  for (const id of ["c1", "c2"])
    coordinators.push(await startCoordinator({ nc: await nats.connect(id), namespace, id }));
  client = await HookbusClient.connect({
    nc: await nats.connect("a1"),
    namespace,
    timeoutMs: 5000,
  });
  await until(async () => (await callTool("warmup")).decision.outcome === "allow");
}, 60_000);

afterAll(async () => {
  await client?.close();
  await Promise.all(coordinators.splice(0).map((c) => c.stop()));
}, 30_000);

describe("applyEmergencyStop", () => {
  it("resolves only when every coordinator enforces the stop and the agents' bound has passed", async () => {
    const started = Date.now();
    const result = await applyEmergencyStop(nc, subjects, change("stop", "exec"), {
      waitMs: 5000,
    });
    expect(result.changed).toBe(true);
    expect(result.enforced).toBe(true);
    expect(result.propagation?.laggards).toEqual([]);
    expect(result.propagation?.coordinators.map((c) => c.id).sort()).toEqual(["c1", "c2"]);
    for (const c of result.propagation!.coordinators)
      expect(c.revision).toBeGreaterThanOrEqual(result.list.revision);
    // AGENT_STOPS_STALE_AFTER_MS (750) after the store, which happened after `started`.
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    const stored = await (await StopStore.open(nc, subjects)).current();
    expect(stored.revision).toBe(result.list.revision);
    const blocked = await callTool("exec");
    expect(blocked.decision.outcome).toBe("block");
    expect((await callTool("read_file")).decision.outcome).toBe("allow");
  });

  it("stores nothing when resuming what is not stopped, and says it is in force", async () => {
    const result = await applyEmergencyStop(nc, subjects, change("resume", "never-stopped"), {
      waitMs: 5000,
    });
    expect(result).toMatchObject({ changed: false, enforced: true, propagation: undefined });
  });

  it("with waitMs 0, stores the change and does not claim enforcement", async () => {
    const result = await applyEmergencyStop(nc, subjects, change("resume", "exec"), { waitMs: 0 });
    expect(result).toMatchObject({ changed: true, enforced: false, propagation: undefined });
    await until(async () => (await callTool("exec")).decision.outcome === "allow");
  });
});
