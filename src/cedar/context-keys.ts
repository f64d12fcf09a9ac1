/**
 * Which context attributes a policy set reads, down to nested paths. Handing Cedar's WebAssembly
 * engine a context costs time per attribute (each crosses the JS/Wasm boundary), and the answer
 * memo is keyed by the context's JSON, so a request carries only what some policy reads: a set
 * that reads `context.session.taint` gets `{ session: { taint } }`, not the session's growing
 * lists of tools, and a memo entry stays valid while they grow. Conservative: any use of
 * `context` other than reading a named attribute (`context ==`, `context in`, passing it whole)
 * keeps the whole context, and a path read whole (`context.call.urls.contains(…)`) keeps all
 * below it.
 */
import { cedarWasm, type PolicyJson } from "./wasm.js";

/** The paths read under one attribute: all of it, or only what its children name. */
export interface ContextPaths {
  /** Read as a value: everything below is kept. */
  whole: boolean;
  children: Map<string, ContextPaths>;
}

/** The top level's paths, or "all" when a policy reads the context as a value. */
export type ContextKeys = ContextPaths | "all";

export function contextKeysOf(policyTexts: readonly string[]): ContextKeys {
  const json: PolicyJson[] = [];
  for (const text of policyTexts) {
    const answer = cedarWasm.policyToJson(text);
    if (answer.type === "failure") return "all";
    json.push(answer.json);
  }
  return contextKeysOfJson(json);
}

/** The same, from the policies' JSON (already computed by whoever parsed the set). */
export function contextKeysOfJson(policies: readonly PolicyJson[]): ContextKeys {
  const root = emptyPaths();
  for (const policy of policies) {
    for (const clause of policy.conditions) {
      if (!collect(clause.body, root)) return "all";
    }
  }
  return root;
}

/** The top-level attribute names kept (for people and tests); "all" when the context is whole. */
export function topLevelKeys(keys: ContextKeys): ReadonlySet<string> | "all" {
  return keys === "all" ? "all" : new Set(keys.children.keys());
}

function emptyPaths(): ContextPaths {
  return { whole: false, children: new Map() };
}

/**
 * Adds the paths read from `context` under `root`; false when `context` is used whole. An
 * explicit stack, not recursion: the JSON is as deep as the policy's expression, which its author
 * chooses (limits.ts bounds it, and this walk does not rely on that).
 */
function collect(root: unknown, paths: ContextPaths): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    if (typeof node !== "object" || node === null) continue;
    const record = node as Record<string, unknown>;
    if (record.Var === "context") return false;
    if (record.Value !== undefined) continue; // a literal: no expression inside
    const read = contextRead(record);
    if (read === false) return false;
    if (read !== undefined) addPath(paths, read.path, read.presenceOnly);
    else stack.push(...Object.values(record));
  }
  return true;
}

interface ContextRead {
  /** Attribute names from the top of the context down. */
  path: string[];
  /** `… has attr`: only whether the last attribute exists matters. */
  presenceOnly: boolean;
}

/**
 * The longest chain of `.attr`/`has attr` ending at `context`: its path; false when an attribute
 * is not a plain name; undefined when the chain does not start at `context` (the caller then
 * walks inside it).
 */
function contextRead(record: Record<string, unknown>): ContextRead | false | undefined {
  const reversed: string[] = [];
  let presenceOnly = false;
  let node: unknown = record;
  let first = true;
  for (;;) {
    const step = accessOf(node);
    if (step === undefined) return undefined;
    if (step === false) return false;
    if (first) presenceOnly = step.op === "has";
    first = false;
    for (let i = step.attrs.length - 1; i >= 0; i--) reversed.push(step.attrs[i]!);
    if (isContext(step.left)) return { path: reversed.reverse(), presenceOnly };
    node = step.left;
  }
}

function accessOf(
  node: unknown,
): { op: "." | "has"; left: unknown; attrs: string[] } | false | undefined {
  if (typeof node !== "object" || node === null) return undefined;
  const record = node as Record<string, unknown>;
  for (const op of [".", "has"] as const) {
    const access = record[op] as { left?: unknown; attr?: unknown } | undefined;
    if (access === undefined) continue;
    const attrs = Array.isArray(access.attr) ? (access.attr as unknown[]) : [access.attr];
    if (attrs.length === 0 || !attrs.every((a) => typeof a === "string")) return false;
    return { op, left: access.left, attrs: attrs };
  }
  return undefined;
}

function isContext(node: unknown): boolean {
  return typeof node === "object" && node !== null && (node as { Var?: unknown }).Var === "context";
}

function addPath(root: ContextPaths, path: readonly string[], presenceOnly: boolean): void {
  let node = root;
  for (const attr of path) {
    let child = node.children.get(attr);
    if (child === undefined) node.children.set(attr, (child = emptyPaths()));
    node = child;
  }
  if (!presenceOnly) node.whole = true;
}

/** The context with only the paths kept. */
export function pruneContext<T extends Record<string, unknown>>(context: T, keys: ContextKeys): T {
  if (keys === "all") return context;
  return pruneRecord(context, keys) as T;
}

function pruneRecord(value: Record<string, unknown>, paths: ContextPaths): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [attr, child] of paths.children) {
    const inner = value[attr];
    if (inner !== undefined) kept[attr] = pruneValue(inner, child);
  }
  return kept;
}

/**
 * A value under a kept path: whole when read whole, when no policy reads inside it, or when it is
 * not a plain record (a set, an entity or extension escape: Cedar reads those as values).
 */
function pruneValue(value: unknown, paths: ContextPaths): unknown {
  if (paths.whole || !isPlainRecord(value)) return value;
  return pruneRecord(value, paths);
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return !("__entity" in value) && !("__extn" in value);
}
