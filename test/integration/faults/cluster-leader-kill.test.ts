/**
 * Issue 32 item 4: a kill -9 of the log stream's leader costs no call whose deadline outlasts the
 * election (nats-server 2.9: a follower's 4–9 s election timeout, then the vote). On a three-node
 * cluster the test owns, a steady load of calls with 15 s deadlines runs through the kill: none
 * fails, and every call's record is in the log exactly once (the held appends are re-sent to the
 * new leader with the same message id, and the stream's de-duplication stores one). A call with a
 * 2 s deadline, sent at the kill, still fails, with a coded outage error.
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

const LONG_DEADLINE_MS = 15_000;
const SHORT_DEADLINE_MS = 2_000;
const OUTAGE_CODES = [
  "HOOKBUS_CALL_TIMEOUT",
  "HOOKBUS_COORDINATOR_UNAVAILABLE",
  "HOOKBUS_LOG_UNAVAILABLE",
];

const r3 = useR3Cluster();

interface Sent {
  callId: string;
  sentAt: number;
  at: number;
  decision?: unknown;
  error?: unknown;
}

describe("a kill -9 of the log stream's leader (3 nodes, R3)", () => {
  it("fails no call with a 15 s deadline and records each once; a 2 s call fails coded", async () => {
    const namespace = uniqueNamespace("leader-kill");
    const { bus, agents } = await startTaggerDeployment(r3, namespace, LONG_DEADLINE_MS);

    const sent: Sent[] = [];
    let stopLoad = false;
    let n = 0;
    const call = async (agent: HookbusClient, session: string, timeoutMs: number, id: string) => {
      const entry: Sent = { callId: id, sentAt: Date.now(), at: 0 };
      try {
        const result = await agent.call("before_tool_call", toolCtx(id, session), toolEvent(id), {
          callId: id,
          timeoutMs,
        });
        entry.decision = result.decision;
      } catch (error) {
        entry.error = error;
      }
      entry.at = Date.now();
      return entry;
    };
    const loop = async (agent: HookbusClient, session: string) => {
      while (!stopLoad) {
        sent.push(await call(agent, session, LONG_DEADLINE_MS, `lk-${++n}`));
      }
    };
    const load = Array.from({ length: 8 }, (_, i) => loop(agents[i % 2]!, `session-${i}`));

    await until(() => sent.length >= 50, 20_000, "calls flowing before the fault");
    const leaderName = await logLeaderName(bus);
    const leader = r3.cluster().node(leaderName);
    const killedAt = Date.now();
    await leader.kill();
    const short = call(agents[0]!, "session-short", SHORT_DEADLINE_MS, "lk-short");
    // Restarted after 1 s, as the chaos run does: the other two elect a leader meanwhile.
    await new Promise((r) => setTimeout(r, 1000));
    await leader.start();
    await until(
      () => sent.find((s) => s.sentAt > killedAt && s.decision !== undefined),
      LONG_DEADLINE_MS + 10_000,
      "a call sent after the kill answered",
    );
    const countAfter = sent.length;
    await until(() => sent.length >= countAfter + 50, 30_000, "calls after the election");
    stopLoad = true;
    await Promise.all(load);
    const shortCall = await short;

    const failed = sent.filter((s) => s.error !== undefined);
    const acrossKill = sent.filter((s) => s.sentAt <= killedAt + 9000 && s.at >= killedAt);
    console.log(
      `leader-kill: calls=${sent.length} failed=${failed.length} across_kill=${acrossKill.length} ` +
        `slowest_ms=${Math.max(...sent.map((s) => s.at - s.sentAt))} ` +
        `short=${isHookbusError(shortCall.error) ? shortCall.error.code : "answered"} ` +
        `short_ms=${shortCall.at - shortCall.sentAt}`,
    );
    expect(failed.map((f) => `${f.callId}: ${String(f.error)}`)).toEqual([]);
    expect(acrossKill.length).toBeGreaterThan(0);
    for (const s of sent) expect(s.at - s.sentAt, s.callId).toBeLessThan(LONG_DEADLINE_MS + 1000);

    // The short call could not outlast the election: it failed, coded, near its own deadline.
    expect(isHookbusError(shortCall.error), String(shortCall.error)).toBe(true);
    expect(OUTAGE_CODES).toContain((shortCall.error as { code: string }).code);
    expect(shortCall.at - shortCall.sentAt).toBeLessThan(SHORT_DEADLINE_MS + 1000);

    // Every answered call's record exactly once, with the decision the agent got; nothing extra.
    const records = await decisionsViaSurvivor(r3, namespace, leaderName);
    expectRecordedOnceAsAnswered(records, sent);
  }, 120_000);
});
