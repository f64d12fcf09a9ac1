/**
 * A three-node JetStream cluster on loopback: R3 streams and buckets (HOOKBUS_REPLICAS=3),
 * coordinators and a worker connected to different nodes, load from concurrent sessions, and the
 * log stream's leader SIGKILLed mid-run and restarted. Every answered call has exactly one record
 * (no duplicates, the answer is the record's decision) and calls resume within the election time.
 */
import { describe, expect, it } from "vitest";
import { isHookbusError, type HookbusClient } from "../../../src/index.js";
import { logLeaderName, useR3Cluster } from "../../support/r3-cluster.js";
import {
  decisionsViaSurvivor,
  expectRecordedOnceAsAnswered,
  startTaggerDeployment,
} from "../../support/r3-tagger.js";
import { toolCtx, toolEvent, uniqueNamespace, until } from "./harness.js";

/** Leader election on nats-server 2.9 takes a few seconds; more on a loaded 2-core machine. */
const RESUME_WITHIN_MS = 15_000;
const CODES_DURING_FAILOVER = [
  "HOOKBUS_CALL_TIMEOUT",
  "HOOKBUS_COORDINATOR_UNAVAILABLE",
  "HOOKBUS_LOG_UNAVAILABLE",
];

const r3 = useR3Cluster();

describe("JetStream cluster (3 nodes, R3)", () => {
  it("keeps one record per answered call through a SIGKILL of the log stream's leader", async () => {
    const namespace = uniqueNamespace("cluster");
    const { bus, agents } = await startTaggerDeployment(r3, namespace, 5000);

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
    const leaderName = await logLeaderName(bus);
    const leader = r3.cluster().node(leaderName);
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
    const records = await decisionsViaSurvivor(r3, namespace, leaderName);
    expectRecordedOnceAsAnswered(records, answered);
    console.log(
      `cluster: answered=${answered.length} failed=${failures.length} resumed_after_ms=${resumed - killedAt}`,
    );
  }, 90_000);
});
