/**
 * A decision record written from its parts with the call's own bytes of its context and event
 * (log/decision-record.ts, log/call-text.ts): every reader must see the record JSON.stringify
 * would have written, and the bytes are the same whenever the call's text is JSON.stringify's.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { callText } from "../../../src/log/call-text.js";
import { buildDecisionRecord, decisionRecordJson } from "../../../src/log/decision-record.js";
import { LogRecord } from "../../../src/log/record.js";
import { mergeOutcomes } from "../../../src/merge/merge.js";
import type { PolicyOutcomeInput } from "../../../src/merge/outcome.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const HOOK = "before_tool_call";

const outcomeArb: fc.Arbitrary<PolicyOutcomeInput> = fc.record(
  {
    policy: fc.constantFrom("p1", "p2", "p3"),
    version: fc.constantFrom("1", "2.0"),
    priority: fc.integer({ min: 0, max: 100 }),
    mode: fc.constantFrom("enforce" as const, "shadow" as const),
    status: fc.constantFrom("ok" as const, "timeout" as const),
    verdict: fc.oneof(
      fc.constant(undefined),
      fc.record({ block: fc.boolean(), blockReason: fc.string({ maxLength: 8 }) }),
      fc.record({ params: fc.dictionary(fc.string({ maxLength: 4 }), fc.string()) }),
    ),
    latencyMs: fc.double({ min: 0, max: 50, noNaN: true }),
  },
  { requiredKeys: ["policy", "priority", "status"] },
);

const partsArb = fc.record({
  callId: fc.string({ minLength: 1, maxLength: 12 }),
  context: fc.record({
    agentId: fc.string({ minLength: 1, maxLength: 8 }),
    sessionKey: fc.string({ minLength: 1, maxLength: 8 }),
    extra: fc.jsonValue({ maxDepth: 3 }),
  }),
  params: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 3 })),
  outcomes: fc.uniqueArray(outcomeArb, { selector: (o) => o.policy, maxLength: 3 }),
  stopsRevision: fc.option(fc.nat(), { nil: undefined }),
  coordinator: fc.string({ maxLength: 10 }),
});

type Parts = typeof partsArb extends fc.Arbitrary<infer T> ? T : never;

function recordOf(p: Parts) {
  const event = { toolName: "read_file", params: p.params };
  const result = mergeOutcomes(HOOK, event, p.outcomes);
  return buildDecisionRecord({
    callId: p.callId,
    hook: HOOK,
    context: p.context,
    event,
    result,
    outcomes: p.outcomes,
    callDigest: "a".repeat(64),
    registryRevision: 3,
    stopsRevision: p.stopsRevision,
    receivedAt: new Date(1_700_000_000_000),
    decidedAt: new Date(1_700_000_000_123),
    coordinator: p.coordinator,
  });
}

/** A call body as an agent could write it: spaced, keys in another order, `\u` escapes. */
function oddly(call: unknown): string {
  return JSON.stringify(call, null, 1).replaceAll('"a', '"\\u0061');
}

describe("a decision record written from its parts", () => {
  it("is JSON.stringify's bytes when the call's text is JSON.stringify's", () => {
    fc.assert(
      fc.property(partsArb, (p) => {
        const record = recordOf(p);
        const call = { callId: p.callId, hook: HOOK, context: record.context, event: record.event };
        const body = bytes(JSON.stringify(call));
        const text = callText(body);
        if (text === undefined) return; // a number JSON.stringify would change: not spliced
        const written = decisionRecordJson(record, text);
        expect(Buffer.from(written).toString("utf8")).toBe(JSON.stringify(record));
      }),
      { numRuns: 400 },
    );
  });

  it("reads as the same valid record from a call written any valid way", () => {
    fc.assert(
      fc.property(partsArb, (p) => {
        const record = recordOf(p);
        const call = { event: record.event, hook: HOOK, context: record.context, callId: "x" };
        const text = callText(bytes(oddly(call)));
        if (text === undefined) return;
        const read: unknown = JSON.parse(Buffer.from(decisionRecordJson(record, text)).toString());
        expect(read).toEqual(JSON.parse(JSON.stringify(record)));
        expect(LogRecord.safeParse(read).success).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    ["a negative zero", '{"context":{"n":-0},"event":{}}'],
    ["a number that overflows a double", '{"context":{},"event":{"n":1e999}}'],
    ["a top-level key spelled with an escape", '{"\\u0063ontext":{},"event":{}}'],
    ["no event", '{"context":{}}'],
  ])("is not spliced from a call with %s", (_what, body) => {
    expect(callText(bytes(body))).toBeUndefined();
  });

  it("is not spliced from bytes that are not UTF-8", () => {
    const body = Uint8Array.of(...bytes('{"context":{"a":"'), 0xff, ...bytes('"},"event":{}}'));
    expect(callText(body)).toBeUndefined();
    expect(callText(bytes('{"context":{"a":"é"},"event":{"b":[1,2.5,true,null]}}'))).toEqual({
      context: bytes('{"a":"é"}'),
      event: bytes('{"b":[1,2.5,true,null]}'),
    });
  });
});
