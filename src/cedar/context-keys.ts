/**
 * Which top-level context attributes a policy set reads. Handing Cedar's WebAssembly engine a
 * context costs time per attribute (each crosses the JS/Wasm boundary), and the session facts
 * alone are most of a request's cost, so a request carries only the attributes some policy
 * reads. Conservative: any use of `context` other than reading a named attribute (`context ==`,
 * `context in`, passing it whole) keeps the whole context.
 */
import { cedarWasm } from "./wasm.js";

export type ContextKeys = ReadonlySet<string> | "all";

export function contextKeysOf(policyTexts: readonly string[]): ContextKeys {
  const keys = new Set<string>();
  for (const text of policyTexts) {
    const json = cedarWasm.policyToJson(text);
    if (json.type === "failure") return "all";
    for (const clause of json.json.conditions) {
      if (!collect(clause.body, keys)) return "all";
    }
  }
  return keys;
}

/** Adds the attributes read from `context` under `node`; false when `context` is used whole. */
function collect(node: unknown, keys: Set<string>): boolean {
  if (Array.isArray(node)) return node.every((child) => collect(child, keys));
  if (typeof node !== "object" || node === null) return true;
  const record = node as Record<string, unknown>;
  if (record.Var === "context") return false;
  if (record.Value !== undefined) return true; // a literal: no expression inside
  for (const op of [".", "has"]) {
    const access = record[op] as { left?: unknown; attr?: unknown } | undefined;
    if (access !== undefined && isContext(access.left)) {
      const attr = Array.isArray(access.attr) ? (access.attr[0] as unknown) : access.attr;
      if (typeof attr !== "string") return false;
      keys.add(attr);
      return true;
    }
  }
  return Object.values(record).every((child) => collect(child, keys));
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
