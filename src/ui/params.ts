/**
 * The UI's query parameters, checked before anything is read: each page names the parameters it
 * takes, a parameter is at most MAX_PARAM_CHARS characters and given once, and anything else is
 * HOOKBUS_INVALID_ARGUMENT naming the parameter (shown on the page, with a 400).
 */
import { parseAuditTime } from "../audit/time.js";
import { HookbusError } from "../foundation/errors.js";
import { checkIndexFilter, type IndexFilter, type PolicyStatusFilter } from "../audit/pg/query.js";
import type { AuditOutcome } from "../audit/filter.js";
import type { HookName } from "../catalog/catalog.js";

/** Longer than any id, policy name or time the UI is asked for. */
export const MAX_PARAM_CHARS = 256;
/** Rows on one search page (the cursor pages on). */
export const MAX_UI_LIMIT = 500;
export const DEFAULT_UI_LIMIT = 50;

export const SEARCH_PARAMS = [
  "agent",
  "session",
  "run",
  "hook",
  "outcome",
  "policy",
  "status",
  "blocked-by",
  "since",
  "until",
  "limit",
  "cursor",
  "shadow-changed",
  "order",
] as const;

function invalid(argument: string, message: string): HookbusError {
  return new HookbusError("HOOKBUS_INVALID_ARGUMENT", `${argument}: ${message}`, { argument });
}

/** The parameters of `url` as a map, refusing unknown, repeated and over-long ones. */
export function readParams(url: URL, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  for (const [name, value] of url.searchParams) {
    const shown = JSON.stringify(name.slice(0, 40));
    if (!allowed.includes(name))
      throw invalid(
        name.slice(0, 40),
        `unknown parameter ${shown}; this page takes ${allowed.join(", ") || "none"}`,
      );
    if (params.has(name)) throw invalid(name, "given more than once");
    if (value.length > MAX_PARAM_CHARS)
      throw invalid(name, `at most ${MAX_PARAM_CHARS} characters`);
    // An empty form field means "no filter".
    if (value.trim() !== "") params.set(name, value.trim());
  }
  return params;
}

function integer(
  params: Map<string, string>,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  if (!/^\d{1,16}$/.test(value) || Number(value) < min || Number(value) > max)
    throw invalid(name, `expected an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/** A positive stream sequence (`seq`, `cursor`). */
export function sequence(params: Map<string, string>, name: string): number | undefined {
  return integer(params, name, 0, Number.MAX_SAFE_INTEGER);
}

export interface SearchQuery {
  filter: IndexFilter;
  limit: number;
  /** The parameters as given, to refill the form and build links. */
  given: Map<string, string>;
}

/** The search page's filter; the index's own checks name the field that is wrong. */
export function searchQuery(url: URL, now = new Date()): SearchQuery {
  const given = readParams(url, SEARCH_PARAMS);
  const time = (name: string) => {
    const value = given.get(name);
    return value === undefined ? undefined : parseAuditTime(value, name, now);
  };
  const shadow = given.get("shadow-changed");
  if (shadow !== undefined && shadow !== "on" && shadow !== "true")
    throw invalid("shadow-changed", `expected "on" or "true", got ${JSON.stringify(shadow)}`);
  const limit = integer(given, "limit", 1, MAX_UI_LIMIT) ?? DEFAULT_UI_LIMIT;
  const order = given.get("order") ?? "newest";
  if (order !== "newest" && order !== "oldest")
    throw invalid("order", `expected "newest" or "oldest", got ${JSON.stringify(order)}`);
  const raw: IndexFilter = {
    agentId: given.get("agent"),
    sessionKey: given.get("session"),
    runId: given.get("run"),
    hook: given.get("hook") as HookName | undefined,
    outcome: given.get("outcome") as AuditOutcome | undefined,
    policy: given.get("policy"),
    status: given.get("status") as PolicyStatusFilter | undefined,
    blockedBy: given.get("blocked-by"),
    since: time("since"),
    until: time("until"),
    cursor: sequence(given, "cursor"),
    shadowChanged: shadow === undefined ? undefined : true,
    newestFirst: order === "newest",
    limit,
  };
  try {
    return { filter: checkIndexFilter(raw), limit, given };
  } catch (error) {
    // The index names its fields (agentId, blockedBy); the page names its parameters.
    if (error instanceof HookbusError && typeof error.details?.argument === "string") {
      const field = error.details.argument;
      const param = PARAM_OF_FIELD[field] ?? field;
      throw invalid(param, error.message);
    }
    throw error;
  }
}

const PARAM_OF_FIELD: Record<string, string> = {
  agentId: "agent",
  sessionKey: "session",
  runId: "run",
  blockedBy: "blocked-by",
  shadowChanged: "shadow-changed",
};
