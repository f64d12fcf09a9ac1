/**
 * What applying a registry file would change, policy by policy (`hookbus registry diff FILE`):
 * pure, so the command reads the two documents and only formats what this returns.
 */
import { isDeepStrictEqual } from "node:util";
import type { RegistryPolicy, ValidRegistryDocument } from "./document.js";

export type PolicyChange =
  | { policy: string; change: "added"; after: RegistryPolicy }
  | { policy: string; change: "removed"; before: RegistryPolicy }
  | {
      policy: string;
      change: "changed";
      fields: Array<{ field: string; before: unknown; after: unknown }>;
    };

export interface RegistryDiff {
  /** True when applying the file would store nothing new (no revision bump). */
  same: boolean;
  policies: PolicyChange[];
  /** The `redact` rules differ (they are listed whole: their order is significant). */
  redact?: { before: unknown; after: unknown };
  /** Entries of `toolVocabulary` added, removed or given another class (absent: none). */
  toolVocabulary?: VocabularyChange[];
}

export interface VocabularyChange {
  /** `names.deploy`, `prefixes.notify_`. */
  entry: string;
  before: string | undefined;
  after: string | undefined;
}

const FIELDS = ["hooks", "priority", "mode", "failMode", "timeoutMs", "description"] as const;

export function diffRegistry(
  current: ValidRegistryDocument,
  next: ValidRegistryDocument,
): RegistryDiff {
  const before = new Map(current.policies.map((p) => [p.name, p]));
  const after = new Map(next.policies.map((p) => [p.name, p]));
  const policies: PolicyChange[] = [];
  for (const [name, policy] of after) {
    const old = before.get(name);
    if (old === undefined) {
      policies.push({ policy: name, change: "added", after: policy });
      continue;
    }
    const fields = FIELDS.filter((f) => !isDeepStrictEqual(old[f], policy[f])).map((field) => ({
      field,
      before: old[field],
      after: policy[field],
    }));
    if (fields.length > 0) policies.push({ policy: name, change: "changed", fields });
  }
  for (const [name, policy] of before) {
    if (!after.has(name)) policies.push({ policy: name, change: "removed", before: policy });
  }
  policies.sort((a, b) => (a.policy < b.policy ? -1 : a.policy > b.policy ? 1 : 0));
  const redactChanged = !isDeepStrictEqual(current.redact ?? [], next.redact ?? []);
  const vocabulary = vocabularyChanges(current, next);
  return {
    same:
      policies.length === 0 &&
      !redactChanged &&
      vocabulary.length === 0 &&
      sameDocument(current, next),
    policies,
    ...(redactChanged ? { redact: { before: current.redact, after: next.redact } } : {}),
    ...(vocabulary.length === 0 ? {} : { toolVocabulary: vocabulary }),
  };
}

function vocabularyChanges(
  current: ValidRegistryDocument,
  next: ValidRegistryDocument,
): VocabularyChange[] {
  const changes: VocabularyChange[] = [];
  for (const table of ["names", "prefixes"] as const) {
    const before: Readonly<Record<string, string>> = current.toolVocabulary?.[table] ?? {};
    const after: Readonly<Record<string, string>> = next.toolVocabulary?.[table] ?? {};
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    for (const key of keys) {
      // Own entries only: a tool may be called `constructor`.
      const was = Object.hasOwn(before, key) ? before[key] : undefined;
      const is = Object.hasOwn(after, key) ? after[key] : undefined;
      if (was !== is) changes.push({ entry: `${table}.${key}`, before: was, after: is });
    }
  }
  return changes;
}

/** Same content, whatever the key order: what decides whether an apply stores a new revision. */
export function sameDocument(a: ValidRegistryDocument, b: ValidRegistryDocument): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}

function show(value: unknown): string {
  return value === undefined ? "(unset)" : JSON.stringify(value);
}

export function formatRegistryDiff(diff: RegistryDiff, revision: number): string {
  if (diff.same) return `no change: the file matches registry revision ${revision}`;
  const lines = [`against registry revision ${revision}:`];
  for (const p of diff.policies) {
    if (p.change === "added")
      lines.push(
        `+ ${p.policy}  (${p.after.hooks.join(",")}, priority ${p.after.priority}, ${p.after.mode})`,
      );
    else if (p.change === "removed") lines.push(`- ${p.policy}`);
    else
      lines.push(
        `~ ${p.policy}  ${p.fields.map((f) => `${f.field}: ${show(f.before)} → ${show(f.after)}`).join("; ")}`,
      );
  }
  if (diff.redact !== undefined) lines.push("~ redact rules changed");
  for (const v of diff.toolVocabulary ?? [])
    lines.push(`~ toolVocabulary.${v.entry}: ${show(v.before)} → ${show(v.after)}`);
  if (lines.length === 1) lines.push("~ the policy order or a detail changed");
  return lines.join("\n");
}
