/**
 * Calls in flight when NATS goes away: the SDK re-sends them (same callId) when the connection
 * comes back, so each is answered soon after the server's return, not at its deadline; and a call
 * whose deadline passes while the server is down fails with HOOKBUS_COORDINATOR_UNAVAILABLE.
 * The test owns its server and SIGKILLs it under concurrent load.
 */
import { afterAll, describe, expect, it } from "vitest";
import { ConnectionWatch } from "../../../src/bus/connection-watch.js";
import {
  definePolicy,
  HookbusClient,
  isHookbusError,
  MemorySessionStateStore,
  runPolicy,
  type PolicyRunner,
} from "../../../src/index.js";
import {
  applyRegistry,
  countByCallId,
  decisions,
  readLog,
  sleep,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
  useNatsServer,
} from "./harness.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";

const nats = useNatsServer({ own: true });
const stops: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
});

/** The goal is 1 s; the margin lets a loaded 2-core machine reconnect three clients. */
const ANSWERED_AFTER_RETURN_MS = 2500;

/** Calls the policy has started on: the kill waits for calls to be really in flight. */
let policyEntered = 0;

interface Outcome {
  callId: string;
  sentAt: number;
  endedAt: number;
  decision?: unknown;
  error?: unknown;
}

async function pipeline(namespace: string, clientTimeoutMs: number) {
  const admin = await nats.connect();
  const bus = await applyRegistry(admin, namespace, {
    policies: [
      {
        name: "slow",
        hooks: ["before_tool_call"],
        priority: 10,
        timeoutMs: 3000,
        failMode: "fail-closed",
      },
    ],
  });
  const coordinator: Coordinator = await startCoordinator({ nc: await nats.connect(), namespace });
  stops.push(() => coordinator.stop());
  const slow = definePolicy({
    name: "slow",
    hooks: {
      // Long enough that many calls are in flight at any moment.
      before_tool_call: async (event) => {
        policyEntered++;
        await sleep(150); // simulated work
        return { params: { ...event.params, checked: true } };
      },
    },
  });
  const runner: PolicyRunner = await runPolicy(slow, {
    nc: await nats.connect(),
    namespace,
    state: new MemorySessionStateStore(),
  });
  stops.push(() => runner.stop());
  const agentNc = await nats.connect();
  // Watched from the start, so a test can wait until the agent has seen the server go.
  const agentConnection = ConnectionWatch.of(agentNc);
  const client = await HookbusClient.connect({
    nc: agentNc,
    namespace,
    timeoutMs: clientTimeoutMs,
  });
  stops.push(() => client.close());
  return { bus, client, agentConnection };
}

function callOnce(client: HookbusClient, callId: string, sink: Outcome[]): Promise<void> {
  const sentAt = Date.now();
  const id = `tc-${callId}`;
  return client
    .call("before_tool_call", toolCtx(id, `s-${callId}`), toolEvent(id), { callId })
    .then(
      (result) =>
        void sink.push({ callId, sentAt, endedAt: Date.now(), decision: result.decision }),
      (error: unknown) => void sink.push({ callId, sentAt, endedAt: Date.now(), error }),
    );
}

describe("re-send on reconnect", () => {
  it("answers every call in flight at a NATS kill, or made during the outage, soon after the server is back, with one record each", async () => {
    const namespace = uniqueNamespace("resend");
    const { bus, client, agentConnection } = await pipeline(namespace, 10_000);
    const outcomes: Outcome[] = [];
    // Warm up: the pipeline answers.
    await callOnce(client, "warm", outcomes);
    expect(outcomes[0]?.error).toBeUndefined();

    const inFlight: Promise<void>[] = [];
    const enteredBefore = policyEntered;
    for (let i = 0; i < 30; i++) inFlight.push(callOnce(client, `c${i}`, outcomes));
    // Kill while they wait for the policy (150 ms each, 30 at once).
    await until(() => policyEntered > enteredBefore, 10_000, "a call reaching the policy");
    const killedAt = Date.now();
    await nats.handle().kill();
    const pendingAtKill = 31 - outcomes.length;
    // Calls made while the server is down: nats.js drops what it queued while disconnected.
    await until(() => !agentConnection.connected, 10_000, "the agent seeing the server gone");
    for (let i = 0; i < 10; i++) inFlight.push(callOnce(client, `o${i}`, outcomes));
    await sleep(1200); // the outage's length (the scenario, not a precondition)
    await nats.handle().start();
    const backAt = Date.now();
    await Promise.all(inFlight);

    expect(pendingAtKill).toBeGreaterThan(0);
    const failures = outcomes.filter((o) => o.error !== undefined);
    expect(failures.map((f) => String(f.error))).toEqual([]);
    const afterKill = outcomes.filter((o) => o.endedAt >= killedAt);
    expect(afterKill.length).toBe(pendingAtKill + 10);
    const slowest = Math.max(...afterKill.map((o) => o.endedAt - backAt));
    expect(slowest).toBeLessThan(ANSWERED_AFTER_RETURN_MS);

    // One record per call, and the answer is what was recorded.
    const records = decisions(await readLog(bus));
    const counts = countByCallId(records);
    for (const o of outcomes) {
      expect(counts.get(o.callId), o.callId).toBe(1);
      expect(records.find((r) => r.callId === o.callId)?.decision).toEqual(o.decision);
    }
  });

  it("fails a call whose deadline passes while the server is down with HOOKBUS_COORDINATOR_UNAVAILABLE", async () => {
    const namespace = uniqueNamespace("resend-down");
    const { client } = await pipeline(namespace, 1200);
    const outcomes: Outcome[] = [];
    await until(
      async () => {
        await callOnce(client, `warm-${outcomes.length}`, outcomes);
        return outcomes.at(-1)?.error === undefined;
      },
      10_000,
      "a first answered call",
    );
    outcomes.length = 0;
    const enteredBefore = policyEntered;
    const calls = [0, 1, 2, 3, 4].map((i) => callOnce(client, `d${i}`, outcomes));
    await until(() => policyEntered > enteredBefore, 10_000, "a call reaching the policy");
    await nats.handle().kill();
    await Promise.all(calls);
    await nats.handle().start();
    expect(outcomes).toHaveLength(5);
    for (const o of outcomes) {
      expect(isHookbusError(o.error), String(o.error)).toBe(true);
      expect((o.error as { code: string }).code).toBe("HOOKBUS_COORDINATOR_UNAVAILABLE");
      // Failed by the deadline (1.2 s), not long after it: the chaos suite counts a call as hung
      // at deadline + 1 s; 2 s here leaves room for a loaded 2-core machine's event-loop lag.
      expect(o.endedAt - o.sentAt).toBeLessThan(1200 + 2000);
    }
  });
});
