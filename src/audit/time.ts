/**
 * Times on the audit command line: ISO-8601 (`2026-05-01`, `2026-05-01T10:00:00Z`,
 * `2026-05-01T12:00+02:00`), a duration ago (`90s`, `15m`, `2h`, `7d`, `1w`, `1h30m`), or `now`.
 */
import { HookbusError } from "../foundation/errors.js";

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/;
const DURATION_PART = /(\d+)(ms|s|m|h|d|w)/g;
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** A duration such as `15m` or `1h30m` in milliseconds; undefined when it is not one. */
export function parseDuration(value: string): number | undefined {
  if (!DURATION.test(value)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of value.matchAll(DURATION_PART))
    ms += Number(amount) * UNIT_MS[unit!]!;
  return ms;
}

function daysIn(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/**
 * Parses an audit time. A date alone is midnight UTC; a date-time without an offset is local
 * time (as JavaScript reads it); add `Z` or an offset to be exact. Throws HOOKBUS_INVALID_ARGUMENT
 * naming `argument` (e.g. `--since`) for anything else.
 */
export function parseAuditTime(value: string, argument = "time", now: Date = new Date()): Date {
  const text = value.trim();
  const fail = () =>
    new HookbusError(
      "HOOKBUS_INVALID_ARGUMENT",
      `${argument}: cannot read ${JSON.stringify(value)} as a time: use ISO-8601 (2026-05-01, 2026-05-01T10:00:00Z) or a duration ago (30s, 15m, 2h, 7d, 1w, 1h30m), or "now"`,
      { argument },
    );
  if (text === "now") return new Date(now.getTime());
  const duration = parseDuration(text);
  if (duration !== undefined) return new Date(now.getTime() - duration);
  const iso = ISO.exec(text);
  if (iso === null) throw fail();
  const [, y, mo, d, h, mi, s] = iso;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  // Date.parse rolls 2026-02-30 over to March 2: check the fields ourselves.
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) throw fail();
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || Number(s ?? 0) > 59)) throw fail();
  const ms = Date.parse(text.replace(" ", "T"));
  if (Number.isNaN(ms)) throw fail();
  return new Date(ms);
}
