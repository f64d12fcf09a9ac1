/**
 * A three-node JetStream cluster on loopback: R3 streams and buckets (HOOKBUS_REPLICAS=3),
 * coordinators and a worker connected to different nodes, load from concurrent sessions, and the
 * log stream's leader SIGKILLed mid-run and restarted. Every answered call has exactly one record
 * (no duplicates, the answer is the record's decision) and calls resume within the election time.
 */
import { describe, expect, it } from "vitest";
import {
  Bus,
  definePolicy,
  HookbusClient,
  isHookbusError,
  MemorySessionStateStore,
  runPolicy,
} from "../../../src/index.js";
import { useR3Cluster } from "../../support/r3-cluster.js";
import {
  applyRegistry,
  countByCallId,
  decisions,
  readLog,
  toolCtx,
  toolEvent,
  uniqueNamespace,
  until,
} from "./harness.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";

/** Leader election on nats-server 2.9 takes a few seconds; more on a loaded 2-core machine. */
const RESUME_WITHIN_MS = 15_000;
const CODES_DURING_FAILOVER = [
  "HOOKBUS_CALL_TIMEOUT",
  "HOOKBUS_COORDINATOR_UNAVAILABLE",
  "HOOKBUS_LOG_UNAVAILABLE",
];

const r3 = useR3Cluster();
const { connectVia } = r3;

describe("JetStream cluster (3 nodes, R3)", () => {
  it("keeps one record per answered call through a SIGKILL of the log stream's leader", async () => {
    const namespace = uniqueNamespace("cluster");
    const bus = await applyRegistry(await connectVia(0), namespace, {
      policies: [{ name: "tagger", hooks: ["before_tool_call"], priority: 5, timeoutMs: 2000 }],
    });
    for (const node of [0, 1]) {
      const coordinator = await startCoordinator({ nc: await connectVia(node), namespace });
      r3.onStop(() => coordinator.stop());
    }
    const tagger = definePolicy({
      name: "tagger",
      hooks: { before_tool_call: (event) => ({ params: { ...event.params, tagged: true } }) },
    });
    const runner = await runPolicy(tagger, {
      nc: await connectVia(2),
      namespace,
      state: new MemorySessionStateStore(),
    });
    r3.onStop(() => runner.stop());
    const clients = [await connectVia(1), await connectVia(2)].map((nc) =>
      HookbusClient.connect({ nc, namespace, timeoutMs: 5000 }),
    );
    const agents = await Promise.all(clients);
    for (const agent of agents) r3.onStop(() => agent.close());

    const info = await bus.jsm.streams.info(bus.subjects.logStream);
    expect(info.config.num_replicas).toBe(3);
    expect(info.cluster?.replicas?.length).toBe(2);

    const answered: { callId: string; decision: unknown; at: number }[] = [];
    const failures: { callId: string; error: unknown }[] = [];
    let stopLoad = false;
    let n = 0;
    const loop = async (agent: HookbusClient, session: string) => {
      while (!stopLoad) {
        const callId = `cl-${++n}`;
        try {
          const result = await agent.call(
            "before_tool_call",
            toolCtx(callId, session),
            toolEvent(callId),
            { callId },
          );
          answered.push({ callId, decision: result.decision, at: Date.now() });
        } catch (error) {
          failures.push({ callId, error });
        }
      }
    };
    const load = Array.from({ length: 8 }, (_, i) => loop(agents[i % 2]!, `session-${i}`));

    await until(() => answered.length >= 50, 20_000, "calls flowing before the fault");
    const leaderName = (await bus.jsm.streams.info(bus.subjects.logStream)).cluster?.leader;
    expect(leaderName).toBeDefined();
    const leader = r3.cluster().node(leaderName!);
    const killedAt = Date.now();
    await leader.kill();
    const resumed = await until(
      () => answered.find((a) => a.at > killedAt + 200)?.at,
      RESUME_WITHIN_MS + 5000,
      "a call answered after the leader's death",
    );
    const countAtRestart = answered.length;
    await leader.start();
    await until(() => answered.length >= countAtRestart + 50, 30_000, "calls after the restart");
    stopLoad = true;
    await Promise.all(load);

    expect(resumed - killedAt).toBeLessThan(RESUME_WITHIN_MS);
    for (const f of failures) {
      expect(isHookbusError(f.error), String(f.error)).toBe(true);
      expect(CODES_DURING_FAILOVER, String(f.error)).toContain((f.error as { code: string }).code);
    }
    // Read the log through a node that never died.
    const survivor = r3.cluster().nodes.findIndex((node) => node.name !== leaderName);
    const readerNc = await connectVia(survivor);
    // A restarted node rejoins and JetStream may hold a new election: its API can time out briefly.
    const records = await until(
      () =>
        Bus.open(readerNc, { namespace })
          .then(async (reader) => decisions(await readLog(reader)))
          .catch(() => undefined),
      30_000,
      "the log readable through a surviving node",
    );
    const counts = countByCallId(records);
    for (const [callId, count] of counts) expect(count, callId).toBe(1);
    for (const a of answered) {
      expect(counts.get(a.callId), a.callId).toBe(1);
      expect(records.find((r) => r.callId === a.callId)?.decision).toEqual(a.decision);
    }
    console.log(
      `cluster: answered=${answered.length} failed=${failures.length} resumed_after_ms=${resumed - killedAt}`,
    );
  }, 90_000);
});
