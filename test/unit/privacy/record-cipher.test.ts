/**
 * Sealing and opening records (src/privacy/record-cipher.ts): a round trip gives the record
 * back, sealed records keep their schema and hold none of the personal values, a wrong or erased
 * key shows "[erased]" and never content, and edits to the sealed form do not open.
 */
import { randomBytes } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LogRecord, type DecisionRecord } from "../../../src/log/record.js";
import {
  ENCRYPTED_MARK,
  ERASED_MARK,
  isScrubbed,
  openRecord,
  scrubbedCopy,
  sealRecord,
  subjectDigest,
  subjectOf,
  type DataKey,
} from "../../../src/privacy/record-cipher.js";
import { isHookbusError } from "../../../src/foundation/errors.js";

const key = (): DataKey => ({ kid: randomBytes(8).toString("hex"), key: randomBytes(32) });

function decision(params: unknown, context: Record<string, unknown> = {}): DecisionRecord {
  return {
    v: 1,
    kind: "decision",
    callId: "c1",
    hook: "before_tool_call",
    context: { agentId: "a", sessionKey: "s", ...context },
    event: { toolName: "send_email", toolCallId: "t1", params },
    outcomes: [
      {
        policy: "dlp",
        priority: 10,
        mode: "enforce",
        failMode: "fail-closed",
        status: "ok",
        effect: "applied",
        verdict: { block: true, blockReason: `leaks ${JSON.stringify(params)}` },
        latencyMs: 1,
      },
    ],
    decision: { outcome: "block", blockReason: "leaks the address", decidedBy: { block: ["dlp"] } },
    registryRevision: 1,
    receivedAt: "2026-01-01T00:00:00.000Z",
    decidedAt: "2026-01-01T00:00:00.001Z",
  };
}

const subject = subjectDigest("session:s");

/** Every string anywhere in a value. */
const strings = (v: unknown): string[] =>
  typeof v === "string"
    ? [v]
    : typeof v === "object" && v !== null
      ? Object.values(v).flatMap(strings)
      : [];

describe("sealing a record's personal fields", () => {
  it("keeps the clear fields the index and the merge need, and seals the rest", () => {
    const sealed = sealRecord(decision({ to: "alice@example.com" }), subject, key());
    expect(LogRecord.safeParse(sealed).success).toBe(true);
    expect(sealed.event).toEqual({
      toolName: "send_email",
      toolCallId: "t1",
      params: ENCRYPTED_MARK,
    });
    expect(sealed.decision.outcome).toBe("block");
    expect(sealed.decision.decidedBy).toEqual({ block: ["dlp"] });
    expect(sealed.decision.blockReason).toBe(ENCRYPTED_MARK);
    expect(sealed.outcomes[0]!.verdict).toBe(ENCRYPTED_MARK);
    expect(sealed.outcomes[0]!.policy).toBe("dlp");
    expect(JSON.stringify(sealed)).not.toContain("alice");
  });

  it("gives the record back, exactly, with the key it was sealed with (any content)", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.dictionary(fc.string(), fc.jsonValue()), (params, extra) => {
        const record = decision(params);
        record.event = { ...extra, ...record.event };
        const k = key();
        const opened = openRecord(sealRecord(record, subject, k), k);
        expect(opened.failure).toBeUndefined();
        const { encrypted: _, ...back } = opened.record;
        // JSON round trip: -0 and undefined are what JSON makes of them in the log too.
        expect(back).toEqual(JSON.parse(JSON.stringify(record)));
      }),
      { numRuns: 200 },
    );
  });

  it("never changes the record it seals, whatever places share a parent (several outcomes)", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { minLength: 1, maxLength: 6 }), (verdicts) => {
        const record = decision({ to: "x" });
        record.outcomes = verdicts.map((verdict, i) => ({
          ...record.outcomes[0]!,
          policy: `p${i}`,
          verdict: verdict as never,
        }));
        const before = structuredClone(record);
        const k = key();
        const sealed = sealRecord(record, subject, k);
        expect(record).toEqual(before);
        expect(sealed.outcomes.map((o) => o.verdict)).toEqual(verdicts.map(() => ENCRYPTED_MARK));
        const { encrypted: _, ...back } = openRecord(sealed, k).record;
        expect(back).toEqual(JSON.parse(JSON.stringify(record)));
      }),
      { numRuns: 100 },
    );
  });

  it("never uses a nonce twice (the pooled nonces cross several refills)", () => {
    const k = key();
    const ivs = new Set<string>();
    for (let i = 0; i < 2000; i++) ivs.add(sealRecord(decision("p"), subject, k).encrypted!.iv!);
    expect(ivs.size).toBe(2000);
  });

  it("shows every sealed place as [erased] once the key is gone or replaced, and no content", () => {
    const sealed = sealRecord(decision({ to: "alice@example.com" }), subject, key());
    for (const k of [undefined, key()]) {
      const opened = openRecord(sealed, k);
      expect(opened.failure).toBe("erased");
      expect(opened.record.event.params).toBe(ERASED_MARK);
      expect(opened.record.decision.blockReason).toBe(ERASED_MARK);
      expect(strings(opened.record).join(" ")).not.toContain("alice");
    }
  });

  it("does not open a sealed record whose list of places or subject was edited", () => {
    const k = key();
    const sealed = sealRecord(decision({ to: "alice@example.com" }), subject, k);
    const enc = sealed.encrypted!;
    const edits = [
      { ...sealed, encrypted: { ...enc, paths: [...enc.paths].reverse() } },
      { ...sealed, encrypted: { ...enc, subject: subjectDigest("session:other") } },
    ];
    for (const edited of edits) expect(openRecord(edited, k).failure).toBe("corrupt");
  });

  it("takes the subject from the context when the agent names one, within limits", () => {
    expect(subjectOf(decision(1, { subject: "user-42@tenant" }))).toBe("subject:user-42@tenant");
    expect(subjectOf(decision(1))).toBe("session:s");
    for (const bad of ["", "x".repeat(129), "a b", "a.*", 7]) {
      let caught: unknown;
      try {
        subjectOf(decision(1, { subject: bad }));
      } catch (error) {
        caught = error;
      }
      expect(isHookbusError(caught, "HOOKBUS_PRIVACY_SUBJECT_INVALID")).toBe(true);
    }
  });

  it("seals the subject id itself: the record names the subject by digest only", () => {
    const sealed = sealRecord(
      decision(1, { subject: "user-42" }),
      subjectDigest("subject:user-42"),
      key(),
    );
    expect(sealed.context.subject).toBe(ENCRYPTED_MARK);
    expect(JSON.stringify(sealed)).not.toContain("user-42");
  });

  it("the scrubbed copy of a sealed record is the index's erased row: clear fields, [erased], no ciphertext", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (params) => {
        const sealed = sealRecord(decision(params), subject, key());
        const copy = scrubbedCopy(sealed);
        expect(isScrubbed(sealed)).toBe(false);
        expect(isScrubbed(copy)).toBe(true);
        const { iv: _iv, tag: _tag, ct: _ct, ...envelope } = sealed.encrypted!;
        expect(copy.encrypted).toEqual(envelope);
        expect(copy).toEqual({ ...openRecord(sealed, undefined).record, encrypted: envelope });
        expect(copy.event.params).toBe(ERASED_MARK);
        expect(copy.decision.outcome).toBe("block");
        expect(copy.outcomes[0]!.policy).toBe("dlp");
      }),
    );
  });

  it("names places whose member names hold / or ~ by escaped pointers, and opens them", () => {
    const record = decision(1);
    const odd = { ...record, event: { ...record.event, "a/b~c": "private", "~": 2 } };
    const k = key();
    const sealed = sealRecord(odd, subject, k);
    expect(sealed.encrypted!.paths).toEqual(
      expect.arrayContaining(["/event/a~1b~0c", "/event/~0", "/event/params"]),
    );
    expect((sealed.event as Record<string, unknown>)["a/b~c"]).toBe(ENCRYPTED_MARK);
    expect(openRecord(sealed, k).record.event).toEqual(odd.event);
  });
});
