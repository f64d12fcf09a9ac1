/**
 * Scale by starting more processes: three workers of one policy share a load of calls made
 * through a coordinator, and two coordinators share calls. Every role has its own connection, as
 * separate processes would; the log must hold exactly one decision record per call.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
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
  useNatsServer,
} from "./harness.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";

const CALLS = 150;
/** Calls in flight at once (the agent side of a busy deployment). */
const CONCURRENCY = 24;

const nats = useNatsServer();
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const connection = () => nats.connect();

/** Three runners of the policy `shared`, each on its own connection, each counting its calls. */
async function threeWorkers(namespace: string): Promise<number[]> {
  const handled = [0, 0, 0];
  for (const index of [0, 1, 2]) {
    const policy = definePolicy({
      name: "shared",
      // The version tells in the log which worker answered.
      version: `worker-${index}`,
      hooks: {
        async before_tool_call(event) {
          handled[index]!++;
          await sleep(2); // simulated work, so calls overlap
          return event.params["cmd"] === "rm"
            ? { block: true, blockReason: "no rm" }
            : { params: { ...event.params, checkedBy: index } };
        },
      },
    });
    const runner = await runPolicy(policy, {
      nc: await connection(),
      namespace,
      state: new MemorySessionStateStore(),
    });
    cleanups.push(() => runner.stop());
  }
  return handled;
}

/** Makes CALLS before_tool_call calls, CONCURRENCY at a time; every third one is an `rm`. */
async function load(client: HookbusClient) {
  const results: Awaited<ReturnType<typeof callOne>>[] = [];
  let next = 0;
  async function callOne(i: number) {
    const id = `tc-${i}`;
    const cmd = i % 3 === 0 ? "rm" : "ls";
    const result = await client.call(
      "before_tool_call",
      toolCtx(id, `session-${i % 7}`),
      { ...toolEvent(id), params: { cmd } },
      { callId: `call-${i}` },
    );
    return { i, cmd, ...result };
  }
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) results.push(await callOne(next++));
    }),
  );
  return results;
}

function expectAnswered(results: Awaited<ReturnType<typeof load>>) {
  expect(results).toHaveLength(CALLS);
  expect(new Set(results.map((r) => r.callId)).size).toBe(CALLS);
  for (const r of results) {
    expect(r.source).toBe("coordinator");
    if (r.cmd === "rm") {
      expect(r.decision).toMatchObject({ outcome: "block", blockReason: "no rm" });
    } else {
      expect(r.decision).toMatchObject({ outcome: "modify" });
      expect(r.decision.params).toMatchObject({ cmd: "ls" });
      expect(typeof r.decision.params?.["checkedBy"]).toBe("number");
    }
  }
}

const registry = {
  policies: [
    {
      name: "shared",
      hooks: ["before_tool_call" as const],
      priority: 10,
      timeoutMs: 4000,
      failMode: "fail-closed" as const,
    },
  ],
};

describe("scale", () => {
  it(`three workers of one policy share ${CALLS} calls made through a coordinator`, async () => {
    const namespace = uniqueNamespace("scale");
    const bus = await applyRegistry(await connection(), namespace, registry);
    const coordinator = await startCoordinator({ nc: await connection(), namespace });
    cleanups.push(() => coordinator.stop());
    const handled = await threeWorkers(namespace);
    const client = await HookbusClient.connect({ nc: await connection(), namespace });
    cleanups.push(() => client.close());

    const results = await load(client);
    expectAnswered(results);

    // Each worker took part, and together they answered each call exactly once.
    for (const count of handled) expect(count).toBeGreaterThan(0);
    expect(handled.reduce((a, b) => a + b, 0)).toBe(CALLS);

    const records = decisions(await readLog(bus));
    const counts = countByCallId(records);
    expect(records).toHaveLength(CALLS);
    for (const r of results) expect(counts.get(r.callId!)).toBe(1);
    // The log agrees with the workers' own counts of who answered what.
    const byVersion = [0, 1, 2].map(
      (index) =>
        records.filter(
          (r) => r.outcomes[0]?.version === `worker-${index}` && r.outcomes[0].status === "ok",
        ).length,
    );
    expect(byVersion).toEqual(handled);
    for (const r of results) {
      const record = records.find((x) => x.callId === r.callId)!;
      expect(record.decision).toEqual(r.decision);
      expect(record.coordinator).toBe(coordinator.id);
    }
  });

  it(`two coordinators, on separate connections, share ${CALLS} calls; one record per call`, async () => {
    const namespace = uniqueNamespace("scale");
    const bus = await applyRegistry(await connection(), namespace, registry);
    const ids = ["coordinator-a", "coordinator-b"];
    for (const id of ids) {
      const coordinator = await startCoordinator({ nc: await connection(), namespace, id });
      cleanups.push(() => coordinator.stop());
    }
    await threeWorkers(namespace);
    const client = await HookbusClient.connect({ nc: await connection(), namespace });
    cleanups.push(() => client.close());

    const results = await load(client);
    expectAnswered(results);

    const records = decisions(await readLog(bus));
    expect(records).toHaveLength(CALLS);
    const counts = countByCallId(records);
    for (const r of results) expect(counts.get(r.callId!)).toBe(1);
    const byCoordinator = new Map<string, number>();
    for (const r of records) {
      byCoordinator.set(
        r.coordinator ?? "(none)",
        (byCoordinator.get(r.coordinator ?? "(none)") ?? 0) + 1,
      );
    }
    expect([...byCoordinator.keys()].sort()).toEqual(ids);
    for (const id of ids) expect(byCoordinator.get(id)).toBeGreaterThan(0);
  });
});
