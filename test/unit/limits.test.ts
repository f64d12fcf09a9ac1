/** The limits that need no server: ids, depth scanning, timeouts, the per-agent token bucket. */
import { describe, expect, it } from "vitest";
import {
  AgentRateLimiter,
  DEFAULT_LIMITS,
  callTimeoutMs,
  checkIdLimit,
  jsonDepthExceeds,
  resolveLimits,
} from "../../src/foundation/limits.js";

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
});

describe("call timeout", () => {
  it("caps the header at the maximum and defaults a missing or bad one", () => {
    expect(callTimeoutMs("1000000000000", 5000, 60_000)).toBe(60_000);
    expect(callTimeoutMs(undefined, 5000, 60_000)).toBe(5000);
    expect(callTimeoutMs("-3", 5000, 60_000)).toBe(5000);
    expect(callTimeoutMs("250", 5000, 60_000)).toBe(250);
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
