/** The limits that need no server: ids, depth scanning, timeouts, the per-agent token bucket. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AgentRateLimiter,
  DEFAULT_LIMITS,
  callTimeoutMs,
  checkIdLimit,
  jsonDepthExceeds,
  resolveLimits,
} from "../../src/foundation/limits.js";
import { referenceDepthExceeds } from "../support/depth-reference.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("ids", () => {
  it.each(["a\r\nb", "tab\there", "nul\u0000", "del\u007f", "c1\u0085", "ls\u2028", "lone\ud800"])(
    "refuses %j (control character or lone surrogate)",
    (id) => {
      expect(() => checkIdLimit("callId", id, 256)).toThrow(
        expect.objectContaining({ code: "HOOKBUS_LIMIT_EXCEEDED" }),
      );
    },
  );

  it("accepts printable Unicode and counts the limit in UTF-8 bytes", () => {
    expect(() => checkIdLimit("agentId", "agent ü ✓ 😀 *.>", 128)).not.toThrow();
    expect(() => checkIdLimit("agentId", "ü".repeat(65), 128)).toThrow(/130 bytes/);
  });
});

describe("JSON depth", () => {
  it("finds depth without recursion, ignoring brackets inside strings", () => {
    expect(jsonDepthExceeds(bytes(`${"[".repeat(100_000)}${"]".repeat(100_000)}`), 64)).toBe(true);
    expect(jsonDepthExceeds(bytes(`{"a":"${"[".repeat(500)}\\"["}`), 2)).toBe(false);
    expect(jsonDepthExceeds(bytes(`{"a":[[1]]}`), 3)).toBe(false);
    expect(jsonDepthExceeds(bytes(`{"a":[[1]]}`), 2)).toBe(true);
  });

  it("a body no longer than the limit passes without a scan; one byte more is scanned", () => {
    expect(jsonDepthExceeds(bytes("[[[["), 4)).toBe(false);
    expect(jsonDepthExceeds(bytes("[[[[["), 4)).toBe(true);
  });

  it("agrees with the depth of the parsed value for any JSON and any limit", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 12 }), fc.integer({ min: 0, max: 14 }), (value, max) => {
        expect(jsonDepthExceeds(bytes(JSON.stringify(value)), max)).toBe(depthOf(value) > max);
      }),
      { numRuns: 500 },
    );
  });

  it("agrees with a byte-by-byte reference scan on any bytes, malformed text included", () => {
    const jsonish = fc.constantFrom(...'{}[]\\"ab:, ');
    fc.assert(
      fc.property(
        fc.array(jsonish, { maxLength: 200 }),
        fc.integer({ min: 0, max: 12 }),
        (parts, max) => {
          const text = bytes(parts.join(""));
          expect(jsonDepthExceeds(text, max)).toBe(referenceDepthExceeds(text, max));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/** Nesting depth of a parsed JSON value: a scalar is 0, `[]` and `{}` are 1. */
function depthOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + Math.max(0, ...children.map(depthOf));
}

describe("call timeout", () => {
  it("caps the asked deadline at the maximum and defaults a missing one", () => {
    expect(callTimeoutMs(1_000_000_000_000, 5000, 60_000)).toBe(60_000);
    expect(callTimeoutMs(undefined, 5000, 60_000)).toBe(5000);
    expect(callTimeoutMs(250, 5000, 60_000)).toBe(250);
  });
});

describe("per-agent rate limit", () => {
  it("refuses past the burst, refills over time, and keeps a bounded map", () => {
    let now = 0;
    const limiter = new AgentRateLimiter(
      { ratePerAgent: 2, rateBurst: 3, rateAgentsTracked: 10 },
      () => now,
    );
    expect([1, 2, 3, 4].map(() => limiter.take("a"))).toEqual([true, true, true, false]);
    expect(limiter.take("b")).toBe(true);
    now += 500;
    expect(limiter.take("a")).toBe(true);
    expect(limiter.take("a")).toBe(false);
    for (let i = 0; i < 100; i++) limiter.take(`agent-${i}`);
    expect(limiter.size).toBe(10);
  });

  it("is off by default", () => {
    const limiter = new AgentRateLimiter(DEFAULT_LIMITS);
    for (let i = 0; i < 1000; i++) expect(limiter.take("a")).toBe(true);
    expect(limiter.size).toBe(0);
  });
});

describe("configuration", () => {
  it("takes options over the environment over the defaults, and refuses nonsense", () => {
    const env = { HOOKBUS_MAX_DEPTH: "32", HOOKBUS_MAX_CALL_TIMEOUT_MS: "1000" };
    expect(resolveLimits({ maxDepth: 16 }, env)).toMatchObject({
      maxDepth: 16,
      maxCallTimeoutMs: 1000,
      maxIdBytes: DEFAULT_LIMITS.maxIdBytes,
    });
    expect(() => resolveLimits({}, { HOOKBUS_MAX_DEPTH: "deep" })).toThrow(/HOOKBUS_MAX_DEPTH/);
    // Recursive hashing and redaction stay safe only up to a ceiling.
    expect(() => resolveLimits({ maxDepth: 5000 }, {})).toThrow(/maxDepth/);
  });
});
