/** Times on the audit command line (pure: no NATS). */
import { describe, expect, it } from "vitest";
import { parseAuditTime, parseDuration } from "../../../src/audit/index.js";
import { isHookbusError } from "../../../src/index.js";

const now = new Date("2026-05-10T12:00:00.000Z");

describe("parseAuditTime", () => {
  it.each([
    ["30s", "2026-05-10T11:59:30.000Z"],
    ["15m", "2026-05-10T11:45:00.000Z"],
    ["2h", "2026-05-10T10:00:00.000Z"],
    ["7d", "2026-05-03T12:00:00.000Z"],
    ["1w", "2026-05-03T12:00:00.000Z"],
    ["1h30m", "2026-05-10T10:30:00.000Z"],
    ["500ms", "2026-05-10T11:59:59.500Z"],
    ["now", "2026-05-10T12:00:00.000Z"],
    ["2026-05-01", "2026-05-01T00:00:00.000Z"],
    ["2026-05-01T10:00:00Z", "2026-05-01T10:00:00.000Z"],
    ["2026-05-01T10:00:00.250Z", "2026-05-01T10:00:00.250Z"],
    ["2026-05-01T12:00+02:00", "2026-05-01T10:00:00.000Z"],
    ["2024-02-29", "2024-02-29T00:00:00.000Z"],
  ])("%s", (text, iso) => {
    expect(parseAuditTime(text, "--since", now).toISOString()).toBe(iso);
  });

  it.each([
    "yesterday",
    "",
    "15x",
    "1.5h",
    "-2h",
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "2026-05-01T25:00Z",
    "12:00",
    "1715342400",
  ])("%j is HOOKBUS_INVALID_ARGUMENT naming the flag", (text) => {
    let thrown: unknown;
    try {
      parseAuditTime(text, "--until", now);
    } catch (error) {
      thrown = error;
    }
    expect(isHookbusError(thrown, "HOOKBUS_INVALID_ARGUMENT")).toBe(true);
    expect((thrown as Error).message).toMatch(/^--until: cannot read/);
  });

  it("parseDuration reads compound durations and refuses anything else", () => {
    expect(parseDuration("1d2h3m4s5ms")).toBe(86_400_000 + 7_200_000 + 180_000 + 4000 + 5);
    expect(parseDuration("2h ")).toBeUndefined();
    expect(parseDuration("h")).toBeUndefined();
  });
});
