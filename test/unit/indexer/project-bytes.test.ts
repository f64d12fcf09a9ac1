/**
 * Reading a record's bytes (projectBytes: only the fields the columns need) must give the rows a
 * full decode gives (projectRecord on JSON.parse), for every record it reads, and hand back to the
 * full decode whatever it cannot read: too deep, an escape, not UTF-8, not an object.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { projectBytes, projectRecord } from "../../../src/indexer/projection.js";
import { syntheticRecord } from "../../support/synthetic-log.js";

const stored = {
  seq: 7,
  subject: "hookbus.audit.a.s.before_tool_call.block",
  storedAt: new Date("2026-01-01T00:00:00Z"),
  address: { agentId: "a", sessionKey: "s", hook: "before_tool_call", kind: "block" as const },
};
const MAX_DEPTH = 72;
const utf8 = (text: string) => new TextEncoder().encode(text);

/** Both projections without the stored JSON (bytes on one side, text on the other). */
function both(text: string) {
  const fast = projectBytes(stored, utf8(text), MAX_DEPTH);
  const full = projectRecord(stored, JSON.parse(text), text);
  const rows = (p: typeof full) => ({ ...p, record: { ...p.record, recordJson: null } });
  return { fast: fast === undefined ? undefined : rows(fast), full: rows(full), stored: fast };
}

describe("projectBytes", () => {
  it("gives the full decode's rows for synthetic records, storing their own bytes", () => {
    for (let i = 0; i < 200; i++) {
      const text = JSON.stringify(syntheticRecord(i, { sessions: 20 }).record);
      const { fast, full, stored: p } = both(text);
      expect(fast).toEqual(full);
      expect(Buffer.from(p!.record.recordJson as Uint8Array).toString()).toBe(text);
    }
  });

  it("gives the full decode's rows for records of any shape the scan reads", () => {
    const field = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom("decision", "late", "observation", "after_tool_call", "adapter"),
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    );
    const outcome = fc.dictionary(
      fc.constantFrom("policy", "version", "mode", "status", "effect", "latencyMs", "verdict"),
      field,
    );
    const record = fc.dictionary(
      fc.constantFrom(
        "kind",
        "hook",
        "context",
        "decision",
        "shadow",
        "receivedAt",
        "publishedAt",
        "decidedAt",
        "latencyMs",
        "callId",
        "eventId",
        "registryRevision",
        "policy",
        "version",
        "wouldHaveBlocked",
        "other",
      ),
      field,
    );
    const withParts = fc.record({
      record,
      outcomes: fc.option(fc.array(fc.oneof(outcome, field), { maxLength: 4 })),
      event: fc.option(
        fc.dictionary(fc.constantFrom("blocked", "blockSource", "blockedBy", "x"), field),
      ),
      changed: fc.option(fc.boolean()),
      indent: fc.constantFrom(undefined, 1, "\t"),
    });
    fc.assert(
      fc.property(withParts, ({ record, outcomes, event, changed, indent }) => {
        const value: Record<string, unknown> = { ...record };
        if (outcomes !== null) value.outcomes = outcomes;
        if (event !== null) value.event = event;
        if (changed !== null) value.shadow = { changed, decision: { deep: [[1]] } };
        const text = JSON.stringify(value, null, indent);
        const { fast, full } = both(text);
        // A `\u` escape, or a key with an escape, goes to the full decode; all else is read.
        if (/(?<!\\)(\\\\)*\\u/.test(text)) expect(fast).toBeUndefined();
        else if (fast === undefined) expect(text).toMatch(/"[^"]*\\.*":/);
        else expect(fast).toEqual(full);
      }),
      { numRuns: 500 },
    );
  });

  it("takes the last value of a repeated key, as JSON.parse does", () => {
    const text =
      '{"kind":"late","kind":"decision","outcomes":[{"policy":"a","policy":"b","status":"ok"}]}';
    const { fast, full } = both(text);
    expect(fast).toEqual(full);
    expect(fast!.policies[0]!.policy).toBe("b");
  });

  it("hands back what it cannot read: deeper than the bound, escapes, not UTF-8, not an object", () => {
    const deep = `{"kind":"decision","event":${"[".repeat(MAX_DEPTH)}${"]".repeat(MAX_DEPTH)}}`;
    expect(projectBytes(stored, utf8(deep), MAX_DEPTH)).toBeUndefined();
    const justWithin = `{"kind":"decision","event":${"[".repeat(MAX_DEPTH - 1)}${"]".repeat(MAX_DEPTH - 1)}}`;
    expect(projectBytes(stored, utf8(justWithin), MAX_DEPTH)).toBeDefined();
    expect(projectBytes(stored, utf8('{"kind":"a\\u0000"}'), MAX_DEPTH)).toBeUndefined();
    expect(projectBytes(stored, utf8('{"event":{"text":"\\ud800"}}'), MAX_DEPTH)).toBeUndefined();
    expect(projectBytes(stored, utf8('{"k\\"ind":"decision"}'), MAX_DEPTH)).toBeUndefined();
    expect(
      projectBytes(stored, new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), MAX_DEPTH),
    ).toBeUndefined();
    for (const text of [
      "{not json",
      "[1]",
      '"x"',
      '{"kind":"decision"} x',
      '{"kind":tru}',
      "",
      "{",
    ])
      expect(projectBytes(stored, utf8(text), MAX_DEPTH)).toBeUndefined();
  });
});
