/**
 * Which top-level context attributes a policy set reads. Handing Cedar's WebAssembly engine a
 * context costs time per attribute (each crosses the JS/Wasm boundary), and the session facts
 * alone are most of a request's cost, so a request carries only the attributes some policy
 * reads. Conservative: any use of `context` other than reading a named attribute (`context ==`,
 * `context in`, passing it whole) keeps the whole context.
 */
import { cedarWasm, type PolicyJson } from "./wasm.js";

export type ContextKeys = ReadonlySet<string> | "all";

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
  const keys = new Set<string>();
  for (const policy of policies) {
    for (const clause of policy.conditions) {
      if (!collect(clause.body, keys)) return "all";
    }
  }
  return keys;
}

/**
 * Adds the attributes read from `context` under `root`; false when `context` is used whole. An
 * explicit stack, not recursion: the JSON is as deep as the policy's expression, which its author
 * chooses (limits.ts bounds it, and this walk does not rely on that).
 */
function collect(root: unknown, keys: Set<string>): boolean {
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
    const read = contextAttribute(record);
    if (read === false) return false;
    if (read !== undefined) keys.add(read);
    else stack.push(...Object.values(record));
  }
  return true;
}

/** `context.attr` or `context has attr`: the attribute; false when unreadable; else undefined. */
function contextAttribute(record: Record<string, unknown>): string | false | undefined {
  for (const op of [".", "has"]) {
    const access = record[op] as { left?: unknown; attr?: unknown } | undefined;
    if (access !== undefined && isContext(access.left)) {
      const attr = Array.isArray(access.attr) ? (access.attr[0] as unknown) : access.attr;
      return typeof attr === "string" ? attr : false;
    }
  }
  return undefined;
}

function isContext(node: unknown): boolean {
  return typeof node === "object" && node !== null && (node as { Var?: unknown }).Var === "context";
}

/** The context with only the kept attributes. */
export function pruneContext<T extends Record<string, unknown>>(context: T, keys: ContextKeys): T {
  if (keys === "all") return context;
  const kept: Record<string, unknown> = {};
  for (const key of keys) if (context[key] !== undefined) kept[key] = context[key];
  return kept as T;
}
