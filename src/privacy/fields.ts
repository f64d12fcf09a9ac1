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

/** Every concrete path (as segments) the pattern reaches in `root`, in document order. */
export function pathsOf(root: unknown, pattern: readonly string[]): string[][] {
  const found: string[][] = [];
  const walk = (node: unknown, at: number, prefix: string[]): void => {
    if (at === pattern.length) {
      if (node !== undefined) found.push(prefix);
      return;
    }
    if (!isNode(node)) return;
    const segment = pattern[at]!;
    const keys =
      segment !== "*"
        ? [segment]
        : Array.isArray(node)
          ? node.map((_, i) => String(i))
          : Object.keys(node).filter((k) => !CLEAR_MEMBERS.has(k));
    for (const key of keys) {
      if (Object.hasOwn(node, key))
        walk((node as Record<string, unknown>)[key], at + 1, [...prefix, key]);
    }
  };
  walk(root, 0, []);
  return found;
}

/** "/a/b" → ["a", "b"] (the table holds no escapes). */
export const segmentsOf = (pointer: string): string[] => pointer.slice(1).split("/");
