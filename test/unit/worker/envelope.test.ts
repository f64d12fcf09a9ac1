/** The worker's hand-written envelope check accepts exactly what its zod schema accepts. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isEnvelope, parseEnvelope } from "../../../src/worker/request-server.js";

const field = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(""),
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
);

const body = fc.oneof(
  fc.record(
    { callId: field, hook: field, policy: field, event: fc.jsonValue(), context: fc.jsonValue() },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);

function zodAccepts(value: unknown): boolean {
  try {
    parseEnvelope(value, "p");
    return true;
  } catch {
    return false;
  }
}

describe("isEnvelope", () => {
  it("agrees with the Envelope schema on any body", () => {
    fc.assert(
      fc.property(body, (value) => {
        expect(isEnvelope(value)).toBe(zodAccepts(value));
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses a body zod refuses with HOOKBUS_BAD_MESSAGE and zod's reason", () => {
    expect(() => parseEnvelope({ callId: "", hook: "before_tool_call" }, "p")).toThrow(
      /not a PolicyRequest: .*callId/s,
    );
  });
});
