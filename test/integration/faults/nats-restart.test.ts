/**
 * A NATS restart during a run: the test owns its server, kills it (SIGKILL) and starts it again
 * (same port, same store) twice while an agent makes calls in a loop. Calls during an outage may
 * fail with a coded error, but every decision the agent did receive has exactly one record in the
 * log afterwards, and calls succeed again once the server is back.
 */
import { afterAll, describe, expect, it } from "vitest";
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
import { RegistryStore } from "../../../src/registry/store.js";
import { startCoordinator, type Coordinator } from "../../../src/coordinator/coordinator.js";

/** What an agent may see while the server is down; anything else is a bug. */
const OUTAGE_CODES = ["HOOKBUS_CALL_TIMEOUT", "HOOKBUS_COORDINATOR_UNAVAILABLE"];

// This file kills and restarts its server, so it must own it (never someone's NATS_URL).
const nats = useNatsServer({ own: true });
let coordinator: Coordinator | undefined;
let runner: PolicyRunner | undefined;
let client: HookbusClient | undefined;

afterAll(async () => {
  await client?.close();
  await runner?.stop();
  await coordinator?.stop();
});

const connection = () => nats.connect();

interface Answered {
  callId: string;
  recordSeq: number | undefined;
  decision: unknown;
  at: number;
}

describe("NATS restart during a run", () => {
  it("loses no record of any decision that was answered, and calls succeed again after the restart", async () => {
    const namespace = uniqueNamespace("restart");
    const admin = await connection();
    const bus = await applyRegistry(admin, namespace, {
      policies: [
        {
          name: "steady",
          hooks: ["before_tool_call"],
          priority: 10,
          timeoutMs: 800,
          failMode: "fail-closed",
        },
      ],
    });
    coordinator = await startCoordinator({ nc: await connection(), namespace });
    const steady = definePolicy({
      name: "steady",
      hooks: {
        before_tool_call: (event) => ({ params: { ...event.params, checked: true } }),
      },
    });
    runner = await runPolicy(steady, {
      nc: await connection(),
      namespace,
      state: new MemorySessionStateStore(),
    });
    client = await HookbusClient.connect({ nc: await connection(), namespace, timeoutMs: 1500 });
    const agent = client;

    const answered: Answered[] = [];
    const failures: { callId: string; error: unknown; at: number }[] = [];
    let n = 0;
    const call = async () => {
      const callId = `restart-${++n}`;
      const id = `tc-${n}`;
      try {
        const result = await agent.call("before_tool_call", toolCtx(id), toolEvent(id), {
          callId,
        });
        answered.push({
          callId,
          recordSeq: result.recordSeq,
          decision: result.decision,
          at: Date.now(),
        });
      } catch (error) {
        failures.push({ callId, error, at: Date.now() });
      }
    };

    const t0 = Date.now();
    const runUntil = t0 + 4000;
    const loop = (async () => {
      while (Date.now() < runUntil) await call();
    })();
    const restarts: number[] = [];
    const chaos = (async () => {
      // The fault schedule itself (not a precondition): kill at these offsets, down for 300 ms.
      for (const at of [700, 2200]) {
        await sleep(t0 + at - Date.now());
        await nats.handle().kill();
        await sleep(300);
        await nats.handle().start();
        restarts.push(Date.now());
      }
    })();
    await Promise.all([loop, chaos]);

    // Back to normal: the next calls succeed (the clients reconnect on their own).
    await until(
      async () => {
        const before = answered.length;
        await call();
        return answered.length > before;
      },
      15_000,
      "a call succeeding after the restart",
    );
    const failuresBefore = failures.length;
    for (let i = 0; i < 5; i++) await call();
    // The last five calls all succeeded.
    expect(failures.slice(failuresBefore)).toEqual([]);
    expect(answered.slice(-5).map((a) => a.callId)).toEqual(
      Array.from({ length: 5 }, (_, i) => `restart-${n - 4 + i}`),
    );
    const lastRestart = restarts.at(-1)!;
    expect(restarts).toHaveLength(2);
    expect(answered.filter((a) => a.at > lastRestart).length).toBeGreaterThanOrEqual(6);
    // Calls went through before, between and after the outages.
    expect(answered.filter((a) => a.at < restarts[0]!).length).toBeGreaterThan(0);

    // Every failure was a coded, expected one.
    for (const f of failures) {
      expect(isHookbusError(f.error), String(f.error)).toBe(true);
      expect(OUTAGE_CODES, String(f.error)).toContain((f.error as { code: string }).code);
    }

    // Every answered decision has exactly one record, at the sequence the agent was told.
    const records = decisions(await readLog(bus));
    const counts = countByCallId(records);
    for (const a of answered) {
      expect(counts.get(a.callId), a.callId).toBe(1);
      const record = records.find((r) => r.callId === a.callId)!;
      expect(record.decision).toEqual(a.decision);
    }
    // No call has two records, answered or not.
    for (const [callId, count] of counts) expect(count, callId).toBe(1);
    const seqs = new Set(answered.map((a) => a.recordSeq));
    expect(seqs.size).toBe(answered.length);

    // The agent retries each failed call with its callId (as the protocol says to): it is
    // answered (with the recorded decision if a coordinator had already stored one), and the
    // log still holds one record per call, even across the restarts.
    for (const f of failures) {
      const id = `tc-${f.callId.slice("restart-".length)}`;
      const retried = await agent.call("before_tool_call", toolCtx(id), toolEvent(id), {
        callId: f.callId,
      });
      const again = decisions(await readLog(bus)).filter((r) => r.callId === f.callId);
      expect(again, f.callId).toHaveLength(1);
      expect(again[0]!.decision).toEqual(retried.decision);
    }

    // The registry watches of the coordinator and the agent survived the restarts: a change
    // applied now reaches both without a restart.
    const store = await RegistryStore.open(admin, bus.subjects);
    const next = await store.apply({
      policies: [
        {
          name: "steady",
          hooks: ["before_tool_call"],
          priority: 10,
          timeoutMs: 800,
          failMode: "fail-closed",
        },
        { name: "newcomer", hooks: ["before_tool_call"], priority: 1, failMode: "fail-open" },
      ],
    });
    const seen = await until(
      async () => {
        const result = await agent.call("before_tool_call", toolCtx("tc-new"), toolEvent("tc-new"));
        return result.registryRevision === next.revision ? result : undefined;
      },
      10_000,
      "the coordinator using the registry revision applied after the restarts",
    );
    const [newRecord] = decisions(await readLog(bus)).filter((r) => r.callId === seen.callId);
    expect(newRecord?.outcomes.map((o) => [o.policy, o.status])).toEqual([
      ["steady", "ok"],
      ["newcomer", "unavailable"],
    ]);
    const empty = await store.apply({ policies: [] });
    await until(
      () => agent.registryRevision === empty.revision && agent.isFastPath("before_tool_call"),
      10_000,
      "the agent's fast path following the registry after the restarts",
    );
  });
});
