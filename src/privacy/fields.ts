/**
 * Which fields of a record are personal, and so encrypted: ONE declared table, so a new content
 * field is one line here. A pattern is a JSON pointer; `*` is every element of an array or every
 * member of an object except CLEAR_MEMBERS. Members nobody listed are encrypted: an event field
 * added tomorrow is private until someone decides it is needed in clear.
 *
 * In clear stays what the merge, the seal, the index and the timeline need: kinds, ids, hooks,
 * tool names, outcomes, who decided, policy ids and statuses, times, digests.
 */
import type { LogRecord } from "../log/record.js";

export const ENCRYPTED_FIELDS: Readonly<Record<LogRecord["kind"], readonly string[]>> = {
  decision: [
    "/context/subject",
    "/event/*",
    "/decision/*",
    "/shadow/decision/*",
    "/outcomes/*/verdict",
    "/outcomes/*/error/message",
    "/facts",
  ],
  error: ["/context/subject", "/event", "/error/message"],
  late: ["/context/subject", "/verdict", "/error/message"],
  observation: ["/context/subject", "/event/*"],
  approval: ["/context/subject", "/answers/*/reason", "/reason"],
  // Names the subject by digest only; stays readable so the erasure itself can be proven.
  erasure: [],
};

/** Members a `*` leaves in clear. */
export const CLEAR_MEMBERS: ReadonlySet<string> = new Set([
  "toolName",
  "toolCallId",
  "model",
  "iteration",
  "isError",
  "durationMs",
  "channel",
  "messageCount",
  "blocked",
  "blockSource",
  "blockedBy",
  "outcome",
  "decidedBy",
]);

type Node = Record<string, unknown> | unknown[];
const isNode = (v: unknown): v is Node => typeof v === "object" && v !== null;

/** One place a pattern reached: its segments and its JSON pointer (escaped). */
export interface Place {
  segments: string[];
  pointer: string;
}

/** A member name as a pointer token (RFC 6901); most names need no escape. */
const token = (key: string): string =>
  key.includes("~") || key.includes("/") ? key.replaceAll("~", "~0").replaceAll("/", "~1") : key;

function pointerOf(segments: readonly string[]): string {
  let pointer = "";
  for (const segment of segments) pointer += `/${token(segment)}`;
  return pointer;
}

/**
 * Every concrete place the pattern reaches in `root`, in document order, appended to `into`.
 * Runs per record on the decision path: no closures, and segment arrays and pointers only for
 * places found (most members a pattern walks through, like a decision's outcomes, hold none).
 */
export function placesOf(
  root: unknown,
  pattern: readonly string[],
  into: Place[] = [],
  at = 0,
  segments: string[] = [],
): Place[] {
  if (at === pattern.length) {
    if (root !== undefined) into.push({ segments: segments.slice(), pointer: pointerOf(segments) });
    return into;
  }
  if (!isNode(root)) return into;
  const segment = pattern[at]!;
  if (segment !== "*") {
    if (Object.hasOwn(root, segment)) descend(root, segment, pattern, into, at, segments);
  } else if (Array.isArray(root)) {
    for (let i = 0; i < root.length; i++) descend(root, String(i), pattern, into, at, segments);
  } else {
    for (const key of Object.keys(root))
      if (!CLEAR_MEMBERS.has(key)) descend(root, key, pattern, into, at, segments);
  }
  return into;
}

function descend(
  node: Node,
  key: string,
  pattern: readonly string[],
  into: Place[],
  at: number,
  segments: string[],
): void {
  segments.push(key);
  placesOf((node as Record<string, unknown>)[key], pattern, into, at + 1, segments);
  segments.pop();
}

/** Every concrete path (as segments) the pattern reaches in `root`, in document order. */
export function pathsOf(root: unknown, pattern: readonly string[]): string[][] {
  return placesOf(root, pattern).map((place) => place.segments);
}

/** "/a/b" → ["a", "b"] (the table holds no escapes). */
export const segmentsOf = (pointer: string): string[] => pointer.slice(1).split("/");
