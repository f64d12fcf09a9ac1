/**
 * Records whose values redaction masked or hashed before they were written (`record.redacted`).
 *
 * - A masked or keyed-hash input (`/event/...`, `/context/...`) means the policies re-decide on
 *   the mask, not the original: the record is reported incomplete.
 * - A masked or hashed field of the recorded decision is compared the way it was stored: the
 *   replayed decision gets the same treatment at the same path. A plain `sha256:` hash compares
 *   exactly (so does a keyed one when HOOKBUS_REDACTION_KEY is set); a mask cannot be compared,
 *   so it counts as equal and the record is reported incomplete.
 * - Replayed verdicts and shadow decisions are redacted where the recorded ones were, so the
 *   report never shows a value the log was configured to hide.
 */
import type { DecisionRecord } from "../log/record.js";
import { hashValue, REDACTION_MASK, redactionKeyFromEnv } from "../log/redaction.js";
import type { ReplayedOutcome } from "./types.js";

function segments(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

type Container = Record<string, unknown> | unknown[];

/** The parent of the pointer's target and the last key, when every step exists. */
function locate(root: unknown, path: string[]): { parent: Container; key: string } | undefined {
  let node = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  const key = path.at(-1);
  if (key === undefined || typeof node !== "object" || node === null || !Object.hasOwn(node, key))
    return undefined;
  return { parent: node as Container, key };
}

function valueAt(root: unknown, path: string[]): { found: boolean; value?: unknown } {
  const at = locate(root, path);
  return at === undefined
    ? { found: false }
    : { found: true, value: (at.parent as Record<string, unknown>)[at.key] };
}

/** What a replay produced for one record, in the shape of the record's own fields. */
export interface Replayed {
  decision: Record<string, unknown>;
  outcomes: ReplayedOutcome[];
  shadow?: { decision: Record<string, unknown>; changed: boolean } | undefined;
}

/**
 * Redact a replay where the log redacted the record: the decision (compared afterwards), the
 * outcome of the same policy (matched by name, not position), the shadow decision. Returns the
 * redacted copy (the input itself when nothing applied) and the paths that make the record
 * incomplete.
 */
export function redactLikeRecord(
  record: DecisionRecord,
  replayed: Replayed,
  key: string | undefined = redactionKeyFromEnv(),
): { replayed: Replayed; incomplete: string[] } {
  const incomplete: string[] = [];
  let copy: Replayed | undefined;
  for (const { path, action } of record.redacted ?? []) {
    const [place, ...rest] = segments(path);
    if (place === "event" || place === "context") {
      incomplete.push(path);
      continue;
    }
    copy ??= JSON.parse(JSON.stringify(replayed)) as Replayed;
    let root: unknown;
    let inner = rest;
    let stored: unknown;
    if (place === "decision") {
      root = copy.decision;
      stored = valueAt(record.decision, rest).value;
    } else if (place === "shadow" && rest[0] === "decision") {
      root = copy.shadow?.decision;
      inner = rest.slice(1);
      stored = valueAt(record.shadow?.decision, inner).value;
    } else if (place === "outcomes" && rest.length > 1) {
      const policy = record.outcomes[Number(rest[0])]?.policy;
      root = copy.outcomes.find((o) => o.policy === policy);
      inner = rest.slice(1);
      stored = valueAt(record.outcomes[Number(rest[0])], inner).value;
    } else {
      continue;
    }
    const target = locate(root, inner);
    if (target === undefined) continue; // the replay has no value there (for the decision: a real difference)
    const slot = target.parent as Record<string, unknown>;
    const hashed = typeof stored === "string" && action === "hash";
    if (hashed && (stored as string).startsWith("sha256:")) {
      slot[target.key] = hashValue(slot[target.key]);
    } else if (hashed && key !== undefined) {
      slot[target.key] = hashValue(slot[target.key], key);
    } else if (place === "decision") {
      // A mask (or a keyed hash we hold no key for) hides what was there: assume it matched.
      slot[target.key] = stored;
      incomplete.push(path);
    } else {
      slot[target.key] = REDACTION_MASK;
    }
  }
  return { replayed: copy ?? replayed, incomplete };
}
