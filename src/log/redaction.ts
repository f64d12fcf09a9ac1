/**
 * Redaction in the log: operators list rules in the registry document (`redact`) that mask or
 * hash values of a record before it is written (and before its chain hash is computed), so the
 * log does not become the place where blocked secrets persist. The record's `redacted` lists
 * every concrete JSON pointer that was changed. See docs/redaction.md.
 *
 * Only the log is redacted: the agent still gets the decision as the policies made it.
 */
import { createHash, createHmac } from "node:crypto";
import { z } from "zod";
import { canonicalize } from "../foundation/canonical-json.js";
import type { LogRecord, RedactedPath } from "./record.js";

/** What a masked value becomes. */
export const REDACTION_MASK = "[redacted]";

/** The environment variable holding the key of keyed hashes (HMAC-SHA256). */
export const REDACTION_KEY_ENV = "HOOKBUS_REDACTION_KEY";

export const RedactionRule = z
  .strictObject({
    hooks: z
      .array(z.string())
      .min(1)
      .optional()
      .describe(
        "Hooks whose records the rule applies to (modifying or observational); absent: every hook.",
      ),
    pointer: z
      .string()
      .describe(
        'A JSON pointer (RFC 6901) into the record, e.g. "/event/content". A segment "*" matches every element of an array (or member of an object): "/outcomes/*/verdict/content".',
      ),
    action: z
      .enum(["mask", "hash"])
      .describe(
        'mask: the value becomes "[redacted]". hash: it becomes "sha256:<hex>" of its canonical JSON, or "hmac-sha256:<hex>" when HOOKBUS_REDACTION_KEY is set.',
      ),
    when: z
      .enum(["always", "block"])
      .default("always")
      .describe(
        "block: only when the record is a blocked decision (or a late verdict that would have blocked, or an after_tool_call observation of a blocked tool).",
      ),
    description: z.string().optional(),
  })
  .meta({ id: "RedactionRule" });

export type RedactionRule = z.output<typeof RedactionRule>;
export type RedactionRuleInput = z.input<typeof RedactionRule>;

export interface RedactOptions {
  /** Key of keyed hashes; absent: plain sha256. Default: none (callers pass the env's). */
  key?: string | undefined;
}

/** The key from HOOKBUS_REDACTION_KEY, or undefined when it is unset or empty. */
export function redactionKeyFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const key = env[REDACTION_KEY_ENV];
  return key === undefined || key === "" ? undefined : key;
}

// ---------------------------------------------------------------------------------------------
// JSON pointers
// ---------------------------------------------------------------------------------------------

/** Segments of an RFC 6901 pointer ("/a/b~1c" → ["a", "b/c"]); throws RangeError when malformed. */
export function parsePointer(pointer: string): string[] {
  if (pointer === "") return [];
  if (!pointer.startsWith("/")) throw new RangeError('a JSON pointer starts with "/"');
  return pointer
    .slice(1)
    .split("/")
    .map((raw) => {
      if (/~(?![01])/.test(raw)) {
        throw new RangeError(`"~" must be followed by 0 or 1 (in "${raw}")`);
      }
      return raw.replaceAll("~1", "/").replaceAll("~0", "~");
    });
}

/** The pointer of these segments ("a", "b/c" → "/a/b~1c"). */
export function formatPointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replaceAll("~", "~0").replaceAll("/", "~1")}`).join("");
}

const INDEX = /^(0|[1-9][0-9]*)$/;
const isIndexOrAny = (s: string | undefined) => s === "*" || (s !== undefined && INDEX.test(s));

/**
 * Where a rule may point: only into values whose type the record schema leaves open, so that
 * a masked or hashed value (a string) keeps the record valid, and never at what the log's
 * readers need to find and group records (kinds, ids, hooks, outcomes, timestamps, chain).
 */
export const REDACTABLE_PLACES =
  "/event/…, /context/… (not agentId or sessionKey), /decision/… and /shadow/decision/… (not outcome or decidedBy), /outcomes/<i>/verdict…, /outcomes/<i>/error/message, /verdict… and /error/message";

/** Why a rule's pointer is not acceptable, or undefined when it is. */
export function pointerProblem(pointer: string): string | undefined {
  let segments: string[];
  try {
    segments = parsePointer(pointer);
  } catch (error) {
    return `"${pointer}" is not a JSON pointer: ${(error as Error).message}`;
  }
  const partial = segments.find((s) => s.includes("*") && s !== "*");
  if (partial !== undefined) {
    return `"*" must be a whole segment (in "${partial}"): it matches every element of an array or member of an object`;
  }
  const [root, a, b, c] = segments;
  const decisionField = (field: string | undefined) =>
    field !== undefined && field !== "*" && field !== "outcome" && field !== "decidedBy";
  const ok =
    (root === "event" && segments.length >= 2) ||
    (root === "context" &&
      segments.length >= 2 &&
      a !== "*" &&
      a !== "agentId" &&
      a !== "sessionKey") ||
    (root === "decision" && decisionField(a)) ||
    (root === "shadow" && a === "decision" && decisionField(b)) ||
    (root === "outcomes" && isIndexOrAny(a) && b === "verdict") ||
    (root === "outcomes" &&
      isIndexOrAny(a) &&
      b === "error" &&
      c === "message" &&
      segments.length === 4) ||
    root === "verdict" ||
    (root === "error" && a === "message" && segments.length === 2);
  return ok
    ? undefined
    : `"${pointer}" cannot be redacted: rules may point at ${REDACTABLE_PLACES}`;
}

// ---------------------------------------------------------------------------------------------
// Applying rules
// ---------------------------------------------------------------------------------------------

/**
 * Whether a record counts as blocked for `when: "block"`: a decision whose outcome is `block`,
 * a late verdict that would have blocked, an observation whose event says `blocked: true`
 * (after_tool_call of a blocked tool). Error records never do.
 */
export function recordBlocked(record: LogRecord): boolean {
  switch (record.kind) {
    case "decision":
      return record.decision.outcome === "block";
    case "late":
      return record.wouldHaveBlocked;
    case "observation":
      return record.event.blocked === true;
    case "error":
      return false;
    case "approval":
      return record.effect === "block";
    case "erasure":
      return false;
  }
}

/** "sha256:<hex>" of the value's canonical JSON, or "hmac-sha256:<hex>" with a key. */
export function hashValue(value: unknown, key?: string): string {
  const text = canonicalize(value);
  return key === undefined || key === ""
    ? `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`
    : `hmac-sha256:${createHmac("sha256", key).update(text, "utf8").digest("hex")}`;
}

interface CompiledRule {
  rule: RedactionRule;
  segments: string[];
  hooks: ReadonlySet<string> | undefined;
}

const compiled = new WeakMap<readonly RedactionRule[], CompiledRule[]>();

function compile(rules: readonly RedactionRule[]): CompiledRule[] {
  let result = compiled.get(rules);
  if (result === undefined) {
    result = rules.map((rule) => ({
      rule,
      segments: parsePointer(rule.pointer),
      hooks: rule.hooks === undefined ? undefined : new Set(rule.hooks),
    }));
    compiled.set(rules, result);
  }
  return result;
}

type Container = Record<string, unknown> | unknown[];

const isContainer = (v: unknown): v is Container => typeof v === "object" && v !== null;

/** Every concrete path the segments reach in `node` (with `*` expanded), in document order. */
function expand(
  node: unknown,
  segments: readonly string[],
  at = 0,
  prefix: string[] = [],
): string[][] {
  if (at === segments.length) return node === undefined ? [] : [prefix];
  if (!isContainer(node)) return [];
  const segment = segments[at]!;
  const keys: string[] =
    segment === "*"
      ? Array.isArray(node)
        ? node.map((_, i) => String(i))
        : Object.keys(node)
      : Array.isArray(node)
        ? INDEX.test(segment) && Number(segment) < node.length
          ? [segment]
          : []
        : Object.hasOwn(node, segment)
          ? [segment]
          : [];
  return keys.flatMap((key) =>
    expand((node as Record<string, unknown>)[key], segments, at + 1, [...prefix, key]),
  );
}

const within = (path: readonly string[], ancestor: readonly string[]) =>
  ancestor.length <= path.length && ancestor.every((s, i) => path[i] === s);

/**
 * The record with the rules applied (a copy: the input is not changed, nor are the objects it
 * shares with the caller's decision), with `redacted` listing each concrete path changed. Rules
 * apply in order; a path inside one already redacted is skipped. A record no rule touches is
 * returned as it is.
 */
export function redactRecord<T extends LogRecord>(
  record: T,
  rules: readonly RedactionRule[] | undefined,
  options: RedactOptions = {},
): T {
  if (rules === undefined || rules.length === 0) return record;
  let blocked: boolean | undefined;
  let root: T | undefined;
  const copies = new WeakSet<object>();
  const done: { path: string[]; action: RedactedPath["action"] }[] = [];

  for (const { rule, segments, hooks } of compile(rules)) {
    if (hooks !== undefined && !hooks.has(record.hook)) continue;
    if (rule.when === "block" && !(blocked ??= recordBlocked(record))) continue;
    for (const path of expand(root ?? record, segments)) {
      if (path.length === 0 || done.some((d) => within(path, d.path))) continue;
      if (root === undefined) {
        root = { ...record };
        copies.add(root);
      }
      // Copy each container on the way down (once), so nothing the caller holds is changed.
      let container = root as unknown as Container;
      for (const key of path.slice(0, -1)) {
        const child = (container as Record<string, unknown>)[key] as Container;
        let copy = child;
        if (!copies.has(child)) {
          copy = Array.isArray(child) ? [...child] : { ...child };
          copies.add(copy);
          (container as Record<string, unknown>)[key] = copy;
        }
        container = copy;
      }
      const last = path.at(-1)!;
      const value = (container as Record<string, unknown>)[last];
      (container as Record<string, unknown>)[last] =
        rule.action === "mask" ? REDACTION_MASK : hashValue(value, options.key);
      // A path redacted whole makes earlier entries inside it moot.
      for (let i = done.length - 1; i >= 0; i--) if (within(done[i]!.path, path)) done.splice(i, 1);
      done.push({ path, action: rule.action });
    }
  }
  if (root === undefined) return record;
  const redacted: RedactedPath[] = [
    ...(record.redacted ?? []),
    ...done.map((d) => ({ path: formatPointer(d.path), action: d.action })),
  ];
  return { ...root, redacted };
}
