/**
 * Replaying the recorded sessions in test/fixtures/ (real log exports, see record-sessions.ts),
 * in process: the recorded policy set reproduces every decision; a changed policy, an edited
 * input or an edited decision is caught exactly where it matters.
 */
import { Socket } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";

import { hashValue } from "../../../src/log/redaction.js";
import { fixtureRegistry, recordedPolicySet } from "../../fixtures/live.js";
import { fixtureEntries, replayAll, strictPolicySet } from "../../fixtures/replay-helpers.js";
import { SESSIONS } from "../../fixtures/sessions.js";
import { summarizeReplay } from "../../../src/replay/summary.js";
import { type ReplayEntry, type ReplayResult } from "../../../src/replay/types.js";

const byCall = (results: ReplayResult[]) => new Map(results.map((r) => [r.callId, r]));
const changed = (results: ReplayResult[]) => results.filter((r) => r.status === "changed");
/** A result without what may legitimately differ between two runs: nothing, so far. */
const comparable = (results: ReplayResult[]) => JSON.parse(JSON.stringify(results)) as unknown;

function editRecord(
  entries: ReplayEntry[],
  callId: string,
  edit: (record: Record<string, unknown>) => void,
) {
  const entry = entries.find((e) => e.record.kind === "decision" && e.record.callId === callId);
  if (entry === undefined) throw new Error(`no fixture record ${callId}`);
  edit(entry.record);
}

afterEach(() => vi.restoreAllMocks());

describe("replaying the recorded fixtures", () => {
  it("holds real log exports of the three scripted sessions, in log order", async () => {
    const entries = await fixtureEntries();
    const sessions = new Set(
      entries.map(
        (e) => `${String(e.record.context.agentId)}/${String(e.record.context.sessionKey)}`,
      ),
    );
    expect([...sessions]).toEqual(SESSIONS.map((s) => `${s.agentId}/${s.sessionKey}`));
    const seqs = entries.map((e) => e.seq!);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(
      entries.some((e) => e.record.kind === "observation" && e.record.hook === "after_tool_call"),
    ).toBe(true);
  });

  it("reproduces every recorded decision with the same policies and registry", async () => {
    const entries = await fixtureEntries();
    const results = await replayAll(entries);
    const decisions = entries.filter((e) => e.record.kind === "decision");
    expect(results).toHaveLength(decisions.length);
    expect(results.map((r) => r.callId)).toEqual(
      decisions.map((e) => (e.record as { callId: string }).callId),
    );
    expect(changed(results)).toEqual([]);
    for (const result of results) {
      expect(result.counterfactual, result.callId).toBe(false);
      expect(result.diff, result.callId).toEqual([]);
      expect(result.replayed, result.callId).toEqual(result.recorded);
    }
    // Stateful decisions among them: the taint block needs the after_tool_call observation, the
    // budget block needs the four calls before it.
    const calls = byCall(results);
    expect(calls.get("conv-web.t1.tool.tc-email")?.summary).toBe(
      "before_tool_call email_send: block by `taint`",
    );
    expect(calls.get("ops-1.t3.tool.tc-readme")?.summary).toBe(
      "before_tool_call read_file: block by `budget`",
    );
    expect(calls.get("conv-web.t1.emit")?.shadow?.changed).toBe(true);
  });

  it("names exactly the records a stricter shell-guard changes, and marks what follows in their session counterfactual", async () => {
    const results = await replayAll(await fixtureEntries(), strictPolicySet());

    expect(changed(results).map((r) => [r.callId, r.summary])).toEqual([
      ["ops-1.t1.tool.tc-df", "before_tool_call exec: allow → block by `shell-guard`"],
      ["ops-1.t3.tool.tc-ls", "before_tool_call exec: allow → block by `shell-guard`"],
    ]);
    const first = results.find((r) => r.callId === "ops-1.t1.tool.tc-df")!;
    expect(first).toMatchObject({
      hook: "before_tool_call",
      agentId: "ops-bot",
      sessionKey: "ops-1",
      status: "changed",
      counterfactual: false,
      change: "allow→block",
      causes: ["shell-guard"],
      recorded: { outcome: "allow" },
      replayed: {
        outcome: "block",
        blockedBy: "shell-guard",
        blockReason: "shell access is not allowed",
      },
    });
    expect(first.diff).toEqual([
      {
        field: "outcome",
        before: "allow",
        after: "block",
        summary: "allow → block by `shell-guard`",
      },
      { field: "blockedBy", after: "shell-guard", summary: "blocked by `-` → `shell-guard`" },
      {
        field: "blockReason",
        after: "shell access is not allowed",
        summary: 'block reason "shell access is not allowed"',
      },
    ]);
    expect(first.outcomes.find((o) => o.policy === "shell-guard")).toMatchObject({
      version: "2.0.0",
      effect: "applied",
      verdict: { block: true, blockReason: "shell access is not allowed" },
    });

    // Every record after the first change in ops-1 is counterfactual (and still evaluated);
    // nothing before it, and nothing in the other sessions, is.
    const ops = results.filter((r) => r.sessionKey === "ops-1");
    const at = ops.findIndex((r) => r.callId === "ops-1.t1.tool.tc-df");
    expect(ops.slice(0, at + 1).every((r) => !r.counterfactual)).toBe(true);
    expect(ops.slice(at + 1).every((r) => r.counterfactual)).toBe(true);
    expect(results.find((r) => r.callId === "ops-1.t3.tool.tc-ls")?.counterfactual).toBe(true);
    const others = results.filter((r) => r.sessionKey !== "ops-1");
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((r) => r.status === "unchanged" && !r.counterfactual)).toBe(true);

    expect(summarizeReplay(results)).toMatchObject({
      records: results.length,
      changed: 2,
      unchanged: results.length - 2,
      counterfactual: ops.length - (at + 1),
      incomplete: 0,
      sessions: 3,
      changedSessions: 1,
      byPolicy: { "shell-guard": 2 },
      byChange: { "allow→block": 2 },
    });
    expect(summarizeReplay(results).byHook.before_tool_call).toEqual({ records: 8, changed: 2 });
  });

  it("catches an edited input: a recorded read_file turned into a destructive exec", async () => {
    const entries = await fixtureEntries();
    editRecord(entries, "ops-1.t2.tool.tc-log", (record) => {
      record.event = { toolName: "exec", toolCallId: "tc-log", params: { command: "rm -rf /" } };
    });
    const results = await replayAll(entries);
    expect(changed(results).map((r) => [r.callId, r.summary])).toEqual([
      ["ops-1.t2.tool.tc-log", "before_tool_call exec: allow → block by `shell-guard`"],
    ]);
    expect(byCall(results).get("ops-1.t2.tool.tc-log")?.replayed).toMatchObject({
      blockReason: "destructive shell command",
    });
  });

  it("catches an edited decision: a recorded greeter reply turned into an allow", async () => {
    const entries = await fixtureEntries();
    editRecord(entries, "conv-help.t1.reply", (record) => {
      record.decision = { outcome: "allow", decidedBy: {} };
    });
    const results = await replayAll(entries);
    expect(changed(results).map((r) => [r.callId, r.summary, r.change])).toEqual([
      ["conv-help.t1.reply", "before_agent_reply: reply added, reason added", "allow→reply"],
    ]);
  });

  it("replays state from the replayed records only: dropping the observation changes the taint decision", async () => {
    const entries = (await fixtureEntries()).filter(
      (e) => !(e.record.kind === "observation" && e.record.eventId === "conv-web.tc-fetch.done"),
    );
    const results = await replayAll(entries);
    expect(changed(results).map((r) => [r.callId, r.summary])).toEqual([
      ["conv-web.t1.tool.tc-email", "before_tool_call email_send: block by `taint` → allow"],
    ]);
    expect(changed(results)[0]?.causes).toEqual(["taint"]);
  });

  it("reports a policy removed from the registry as the cause of the decisions it made", async () => {
    const registry = fixtureRegistry() as { policies: { name: string }[] };
    registry.policies = registry.policies.filter((p) => p.name !== "budget");
    const results = await replayAll(await fixtureEntries(), recordedPolicySet(), registry);
    expect(changed(results).map((r) => [r.callId, r.summary, r.causes])).toEqual([
      [
        "ops-1.t3.tool.tc-readme",
        "before_tool_call read_file: block by `budget` → allow",
        ["budget"],
      ],
    ]);
  });
});

describe("determinism and isolation", () => {
  it("gives the same results twice, and opens no network connection", async () => {
    const connect = vi.spyOn(Socket.prototype, "connect");
    const first = await replayAll(await fixtureEntries(), strictPolicySet());
    const second = await replayAll(await fixtureEntries(), strictPolicySet());
    expect(comparable(second)).toEqual(comparable(first));
    expect(connect).not.toHaveBeenCalled();
    // The spy does see connections (so the assertion above is not vacuous).
    const probe = new Socket().on("error", () => {});
    probe.connect(1, "127.0.0.1");
    probe.destroy();
    expect(connect).toHaveBeenCalledTimes(1);
  });

  it("starts every replay with empty state, whatever ran before", async () => {
    const entries = await fixtureEntries();
    await replayAll(entries);
    // Replaying only ops-1's last turn: budget has counted nothing in this replay, so it allows.
    const lastTurn = entries.filter((e) => e.record.context.runId === "ops-1-run-3");
    const results = await replayAll(lastTurn);
    expect(byCall(results).get("ops-1.t3.tool.tc-readme")?.replayed.outcome).toBe("allow");
  });
});

describe("masked inputs", () => {
  it("reports records whose inputs redaction masked as incomplete, with the paths", async () => {
    const entries = await fixtureEntries();
    editRecord(entries, "conv-web.t2.emit", (record) => {
      const event = record.event as Record<string, unknown>;
      event.content = "[masked]";
      event.allContent = ["[masked]"];
      record.redacted = [
        { path: "/event/content", action: "mask" },
        { path: "/event/allContent/0", action: "mask" },
      ];
    });
    const results = await replayAll(entries);
    const masked = byCall(results).get("conv-web.t2.emit")!;
    expect(masked.incomplete).toEqual({ maskedPaths: ["/event/content", "/event/allContent/0"] });
    // The policy saw the mask, not the secret: its decision cannot be trusted, and says so.
    expect(masked.summary).toBe("before_response_emit: content no longer redacted");
    expect(results.filter((r) => r.incomplete !== undefined).map((r) => r.callId)).toEqual([
      "conv-web.t2.emit",
    ]);
    expect(summarizeReplay(results).incomplete).toBe(1);
  });

  it("compares a hashed decision field by its hash, and a masked one not at all", async () => {
    const callId = "conv-web.t1.result.tc-fetch";
    const hashed = async (hash: (content: unknown) => string) => {
      const entries = await fixtureEntries();
      editRecord(entries, callId, (record) => {
        const decision = record.decision as Record<string, unknown>;
        decision.content = hash(decision.content);
        record.redacted = [{ path: "/decision/content", action: "hash" }];
      });
      return byCall(await replayAll(entries)).get(callId)!;
    };
    // The recorded hash is the hash of what the policies decide again: unchanged, and complete.
    const same = await hashed((content) => hashValue(content));
    expect(same).toMatchObject({ status: "unchanged" });
    expect(same.incomplete).toBeUndefined();
    expect(String((same.replayed as { content?: unknown }).content)).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
    // A hash of anything else is a change, reported as a hash (the report does not un-hide it).
    const other = await hashed(() => hashValue("something else"));
    expect(other).toMatchObject({ status: "changed", diff: [{ field: "content" }] });
    expect(JSON.stringify([other.replayed, other.diff])).not.toContain("[REDACTED]");

    // Masked in the decision and in the policy's verdict: the replay hides both, and cannot
    // tell whether the decision's content changed (incomplete); the verdict is not compared.
    const entries = await fixtureEntries();
    editRecord(entries, callId, (record) => {
      (record.decision as Record<string, unknown>).content = "[redacted]";
      const outcomes = record.outcomes as { policy: string; verdict?: { content?: unknown } }[];
      const index = outcomes.findIndex((o) => o.policy === "secrets");
      outcomes[index]!.verdict!.content = "[redacted]";
      record.redacted = [
        { path: "/decision/content", action: "mask" },
        { path: `/outcomes/${index}/verdict/content`, action: "mask" },
      ];
    });
    const masked = byCall(await replayAll(entries)).get(callId)!;
    expect(masked).toMatchObject({
      status: "unchanged",
      replayed: { content: "[redacted]" },
      incomplete: { maskedPaths: ["/decision/content"] },
    });
    expect(masked.outcomes.find((o) => o.policy === "secrets")?.verdict).toEqual({
      content: "[redacted]",
    });
    expect(JSON.stringify(masked)).not.toMatch(/REDACTED|sk-live/);
  });
});
