/** The projection from a stored record to index rows: tolerant of what it does not know. */
import { describe, expect, it } from "vitest";
import { jsonForPg, projectRecord } from "../../../src/indexer/projection.js";

const stored = {
  seq: 7,
  subject: "hookbus.audit.a.s.before_tool_call.block",
  storedAt: new Date("2026-01-01T00:00:00Z"),
  address: { agentId: "a", sessionKey: "s", hook: "before_tool_call", kind: "block" as const },
};

describe("projectRecord", () => {
  it("reads a record of an unknown future shape without failing, keeping all of it", () => {
    const p = projectRecord(stored, {
      kind: "decision",
      newField: { nested: true },
      outcomes: [{ policy: "x", status: "ok" }, "garbage", { policy: 3 }],
      decision: { blockedBy: 42 },
      receivedAt: "not a date",
    });
    expect(p.record).toMatchObject({
      kind: "decision",
      blockedBy: null,
      receivedAt: null,
      latencyMs: null,
    });
    expect(p.policies).toEqual([
      {
        seq: 7,
        policy: "x",
        version: null,
        mode: null,
        status: "ok",
        effect: null,
        latencyMs: null,
      },
    ]);
    expect(JSON.parse(p.record.recordJson as string)).toMatchObject({ newField: { nested: true } });
  });

  it("takes agent, session, hook and outcome from the subject, not from the body", () => {
    const p = projectRecord(stored, { kind: "decision", context: { agentId: "forged" } });
    expect(p.record).toMatchObject({ agentId: "a", sessionKey: "s", outcome: "block" });
  });

  it("a late verdict becomes a policy row with status late", () => {
    const p = projectRecord(stored, {
      kind: "late",
      policy: "slow",
      latencyMs: 700,
      wouldHaveBlocked: true,
    });
    expect(p.policies).toEqual([
      {
        seq: 7,
        policy: "slow",
        version: null,
        mode: null,
        status: "late",
        effect: "would-have-blocked",
        latencyMs: 700,
      },
    ]);
  });
});

describe("jsonForPg", () => {
  it("replaces NUL characters (jsonb refuses them) but not an escaped backslash before u0000", () => {
    expect(JSON.parse(jsonForPg({ a: "x\u0000y" }))).toEqual({ a: "x\ufffdy" });
    expect(JSON.parse(jsonForPg({ a: "\\u0000" }))).toEqual({ a: "\\u0000" });
    expect(JSON.parse(jsonForPg({ a: "\\\u0000" }))).toEqual({ a: "\\\ufffd" });
  });

  it("replaces lone surrogates (jsonb refuses them), keeps pairs and escaped text", () => {
    expect(JSON.parse(jsonForPg({ a: "x\ud800y", b: "\udfff" }))).toEqual({
      a: "x\ufffdy",
      b: "\ufffd",
    });
    expect(JSON.parse(jsonForPg({ a: "😀 \ud83d\ude00" }))).toEqual({ a: "😀 😀" });
    expect(JSON.parse(jsonForPg({ a: "\\ud800" }))).toEqual({ a: "\\ud800" });
    expect(JSON.parse(jsonForPg({ "\ud800": 1 }))).toEqual({ "\ufffd": 1 });
  });
});
