/**
 * Replay from the live log: a real coordinator, the fixture policies on a worker and the scripted
 * agent write records to JetStream; replay selects them by session, or by agent and time range,
 * and re-decides them in process without touching the live policy state.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Policy } from "../../../src/index.js";
import { findNatsServer, type NatsServerHandle } from "../../../src/testing/index.js";
import { countSelection } from "../../../src/replay/index.js";
import {
  fixtureRegistry,
  recordedPolicySet,
  startLiveDeployment,
  type LiveDeployment,
} from "../../fixtures/live.js";
import { fixtureEntries, replayAll, strictPolicySet } from "../../fixtures/replay-helpers.js";
import { SESSIONS } from "../../fixtures/sessions.js";
import { readSelection, type LogSelection } from "../../../src/log/selection.js";
import { replay } from "../../../src/replay/replay.js";
import { summarizeReplay } from "../../../src/replay/summary.js";
import { type ReplayResult } from "../../../src/replay/types.js";

let server: NatsServerHandle;
let live: LiveDeployment;
/** Between the support-bot sessions conv-web (before) and conv-help (after). */
let between: Date;

const session = (key: string) => SESSIONS.find((s) => s.sessionKey === key)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  server = await findNatsServer();
  live = await startLiveDeployment(server.url, `replay-${randomBytes(4).toString("hex")}`);
  await live.run(session("ops-1"));
  await live.run(session("conv-web"));
  // Legit sleeps: time passing is the point (`between` must fall strictly between the two
  // sessions' stored times), not waiting for something to happen.
  await sleep(50);
  between = new Date();
  await sleep(50);
  await live.run(session("conv-help"));
}, 60_000);

afterAll(async () => {
  await live?.stop();
  await server?.stop();
});

async function fromLog(
  selection: LogSelection,
  policies: Policy[] = recordedPolicySet(),
): Promise<ReplayResult[]> {
  const results: ReplayResult[] = [];
  for await (const r of replay({
    records: readSelection(live.bus, selection),
    policies,
    registry: fixtureRegistry(),
  }))
    results.push(r);
  return results;
}

/** The last sequence of a stream: unchanged means nothing was written to it. */
async function lastSeq(stream: string): Promise<number> {
  return (await live.bus.jsm.streams.info(stream)).state.last_seq;
}

describe("replay from the live log", () => {
  it("selects one session and names the records a stricter policy changes, with their sequence", async () => {
    const results = await fromLog({ sessions: ["ops-1"] }, strictPolicySet());
    expect(new Set(results.map((r) => r.sessionKey))).toEqual(new Set(["ops-1"]));
    const changed = results.filter((r) => r.status === "changed");
    expect(changed.map((r) => [r.callId, r.summary])).toEqual([
      ["ops-1.t1.tool.tc-df", "before_tool_call exec: allow → block by `shell-guard`"],
      ["ops-1.t3.tool.tc-ls", "before_tool_call exec: allow → block by `shell-guard`"],
    ]);
    for (const r of results) expect(r.seq).toBeGreaterThan(0);
    const seqs = results.map((r) => r.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(results.filter((r) => r.counterfactual)).toHaveLength(
      results.length - 1 - results.findIndex((r) => r.callId === "ops-1.t1.tool.tc-df"),
    );
  });

  it("reproduces every live decision with the policies that made them", async () => {
    const results = await fromLog({ sessions: ["ops-1", "conv-web", "conv-help"] });
    expect(summarizeReplay(results)).toMatchObject({ changed: 0, sessions: 3, incomplete: 0 });
  });

  it("decides the live records exactly as it decides the checked-in export of the same script", async () => {
    const shape = (results: ReplayResult[]) =>
      results.map((r) => [r.callId, r.status, r.counterfactual, r.summary, r.replayed]);
    // Sessions in the export's order (a session selection replays them in the order given).
    const live = await fromLog({ sessions: SESSIONS.map((s) => s.sessionKey) }, strictPolicySet());
    const exported = await replayAll(await fixtureEntries(), strictPolicySet());
    expect(shape(live)).toEqual(shape(exported));
  });

  it("selects an agent's sessions by time range", async () => {
    const after = await fromLog({ agentId: "support-bot", since: between });
    expect(new Set(after.map((r) => r.sessionKey))).toEqual(new Set(["conv-help"]));
    const before = await fromLog({ agentId: "support-bot", until: between });
    expect(new Set(before.map((r) => r.sessionKey))).toEqual(new Set(["conv-web"]));
    const all = await fromLog({ agentId: "support-bot" });
    expect(all).toHaveLength(after.length + before.length);
    expect(all.every((r) => r.agentId === "support-bot")).toBe(true);
  });

  it("counts a selection from the stream's subject counts (the progress bar's total)", async () => {
    let read = 0;
    for await (const _entry of readSelection(live.bus, { sessions: ["ops-1", "conv-help"] }))
      read++;
    expect(read).toBeGreaterThan(0);
    expect(await countSelection(live.bus, { sessions: ["ops-1", "conv-help"] })).toBe(read);
    expect(
      await countSelection(live.bus, { agentId: "support-bot", since: between }),
    ).toBeUndefined();
  });

  it("ends at once on a selection with no records", async () => {
    expect(await fromLog({ sessions: ["no-such-session"] })).toEqual([]);
  });

  it("never writes to the live policy state or the log", async () => {
    const stateStream = `KV_${live.namespace}_state`;
    const before = {
      state: await lastSeq(stateStream),
      log: await lastSeq(live.bus.subjects.logStream),
    };
    expect(before.state).toBeGreaterThan(0); // the live run did use KV state (taint, budget)
    await fromLog({ sessions: ["ops-1", "conv-web"] }, strictPolicySet());
    await fromLog({ agentId: "support-bot" });
    expect({
      state: await lastSeq(stateStream),
      log: await lastSeq(live.bus.subjects.logStream),
    }).toEqual(before);
  });
});

describe("replay of records the log redacted", () => {
  it("reports the records whose inputs a redaction rule masked as incomplete", async () => {
    const registry = fixtureRegistry() as Record<string, unknown>;
    registry.redact = [
      { hooks: ["before_response_emit"], pointer: "/event/content", action: "mask" },
      { hooks: ["before_response_emit"], pointer: "/event/allContent/*", action: "mask" },
      { hooks: ["before_response_emit"], pointer: "/decision/content", action: "hash" },
    ];
    const redacting = await startLiveDeployment(
      server.url,
      `replay-redact-${randomBytes(4).toString("hex")}`,
      recordedPolicySet(),
      registry,
    );
    try {
      await redacting.run(session("conv-web"));
      const results: ReplayResult[] = [];
      for await (const r of replay({
        records: readSelection(redacting.bus, { sessions: ["conv-web"] }),
        policies: recordedPolicySet(),
        registry: fixtureRegistry(),
      }))
        results.push(r);
      const incomplete = results.filter((r) => r.incomplete !== undefined);
      expect(incomplete.map((r) => [r.callId, r.incomplete?.maskedPaths])).toEqual([
        ["conv-web.t1.emit", ["/event/content", "/event/allContent/0"]],
        ["conv-web.t2.emit", ["/event/content", "/event/allContent/0"]],
      ]);
      // Re-decided on the mask, the secret is no longer there to redact: a change replay
      // cannot vouch for, and says so. Every complete record is reproduced.
      expect(results.filter((r) => r.status === "changed").map((r) => r.callId)).toEqual([
        "conv-web.t2.emit",
      ]);
      expect(summarizeReplay(results)).toMatchObject({ incomplete: 2, changed: 1 });
      expect(JSON.stringify(results)).not.toContain("sk-live");
    } finally {
      await redacting.stop();
    }
  });
});
