/**
 * An announced stop of one node of a three-node JetStream cluster (R3), under load — the step of
 * a rolling upgrade (test/support/nats-cluster-roll.ts): its leaderships stepped down, lame-duck
 * mode, SIGTERM, restart, rejoin. The stopped node is the log stream's leader and carries the
 * policy's only worker, one of the two coordinators and one of the two agents, so every path that
 * crosses it is cut: appends in flight, verdicts in flight, calls in flight, the worker's
 * subscription. Not one call may fail: every call is answered with the policy's own verdict
 * (a lost ask would be a fail-closed block), within the agent's deadline, and recorded once.
 */
import { describe, expect, it } from "vitest";
import {
  definePolicy,
  HookbusClient,
  MemorySessionStateStore,
  runPolicy,
} from "../../../src/index.js";
import { startCoordinator } from "../../../src/coordinator/coordinator.js";
import { logLeaderName, useR3Cluster } from "../../support/r3-cluster.js";
import { rollNode } from "../../support/nats-cluster-roll.js";
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
import { Bus } from "../../../src/index.js";

const r3 = useR3Cluster({ reconnectTimeWaitMs: 250 });
const { connectVia } = r3;

describe("JetStream cluster (3 nodes, R3): an announced stop", () => {
  it("fails no call while the log leader's node is stopped the operator's way and restarted", async () => {
    const namespace = uniqueNamespace("ldm");
    const admin = await connectVia(0);
    const bus = await applyRegistry(admin, namespace, {
      policies: [
        {
          name: "guard",
          hooks: ["before_tool_call"],
          priority: 5,
          timeoutMs: 2000,
          failMode: "fail-closed",
        },
      ],
    });
    // The first coordinator creates the log stream; the second one goes where the first is not,
    // so one of them is on the node that is stopped (the log stream's leader).
    const first = await startCoordinator({ nc: await connectVia(0), namespace });
    r3.onStop(() => first.stop());
    const leaderName = await logLeaderName(bus);
    const stopped = r3.cluster().nodes.findIndex((n) => n.name === leaderName);
    const other = stopped === 0 ? 1 : 0;
    const second = await startCoordinator({
      nc: await connectVia(stopped === 0 ? 1 : stopped),
      namespace,
    });
    r3.onStop(() => second.stop());
    const guard = definePolicy({
      name: "guard",
      hooks: { before_tool_call: () => undefined },
    });
    const runner = await runPolicy(guard, {
      nc: await connectVia(stopped),
      namespace,
      state: new MemorySessionStateStore(),
    });
    r3.onStop(() => runner.stop());
    const agents = await Promise.all(
      [stopped, other].map(async (node) =>
        HookbusClient.connect({ nc: await connectVia(node), namespace, timeoutMs: 5000 }),
      ),
    );
    for (const agent of agents) r3.onStop(() => agent.close());

    const answered: { callId: string; decision: unknown; ms: number }[] = [];
    const failed: { callId: string; why: string }[] = [];
    let stopLoad = false;
    let n = 0;
    const loop = async (agent: HookbusClient, session: string) => {
      while (!stopLoad) {
        const callId = `ld-${++n}`;
        const sent = Date.now();
        try {
          const { decision } = await agent.call(
            "before_tool_call",
            toolCtx(callId, session),
            toolEvent(callId),
            { callId },
          );
          answered.push({ callId, decision, ms: Date.now() - sent });
          if (decision.outcome !== "allow") failed.push({ callId, why: JSON.stringify(decision) });
        } catch (error) {
          failed.push({ callId, why: String(error) });
        }
      }
    };
    const load = Array.from({ length: 8 }, (_, i) => loop(agents[i % 2]!, `session-${i}`));
    await until(() => answered.length >= 50, 20_000, "calls flowing before the stop");
    const roll = await rollNode(r3.cluster(), r3.cluster().nodes[stopped]!, { nc: admin });
    const countAfter = answered.length;
    await until(() => answered.length >= countAfter + 50, 30_000, "calls after the restart");
    stopLoad = true;
    await Promise.all(load);

    expect(failed, JSON.stringify(failed.slice(0, 5))).toEqual([]);
    const records = decisions(await readLog(await Bus.open(admin, { namespace })));
    const counts = countByCallId(records);
    for (const a of answered) expect(counts.get(a.callId), a.callId).toBe(1);
    for (const [callId, count] of counts) expect(count, callId).toBe(1);
    const slowest = Math.max(...answered.map((a) => a.ms));
    console.log(
      `announced stop: answered=${answered.length} failed=${failed.length} slowest_ms=${slowest} roll_ms=${roll.ms}`,
    );
  }, 120_000);
});
