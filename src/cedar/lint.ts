/**
 * What Cedar accepts but hookbus would read otherwise than its author meant (issue 30, item 7):
 * a typo that changes a decision silently. Refused at `policy validate` and `registry apply`:
 *
 * - an annotation hookbus does not read (`@aproval` makes an intended approval a hard block,
 *   `@reson` loses the reason);
 * - a tool class, taint label, path class or sensitive path label that does not exist
 *   (`resource.class == "shel"`, `context.facts.path.sensitive.contains("ssh-key")` never match);
 *   a misspelt fact name (`context.facts.deletesRecursivly`) is refused by the schema itself;
 * - `@approval` on a rule for a hook that cannot ask a person (it blocks there instead);
 * - with the registry entry's hooks: a rule only for hooks the entry does not list (it never runs).
 */
import type { ValidationIssue } from "../foundation/errors.js";
import { TOOL_CLASSES } from "../vocabulary/classes.js";
import { FACT_VALUE_LISTS } from "./action-context.js";
import { atLine, lineAndColumn, policyOffsets } from "./locate.js";
import type { CedarPolicyInfo, CedarPolicySet } from "./policy-set.js";
import { TAINT_LABELS } from "./session-facts.js";
import { cedarWasm } from "./wasm.js";

/** The annotations hookbus reads (policy-set.ts). */
export const KNOWN_ANNOTATIONS: readonly string[] = ["id", "reason", "approval", "severity"];

/** Only a tool call can be held for a person (docs/approvals.md); elsewhere @approval blocks. */
const HOOKS_THAT_ASK: ReadonlySet<string> = new Set(["before_tool_call"]);

/** Attributes whose string values are a closed list, and the list. */
const CLOSED_VALUES: Readonly<Record<string, { what: string; values: readonly string[] }>> = {
  class: { what: "tool class", values: TOOL_CLASSES },
  classesCalled: { what: "tool class", values: TOOL_CLASSES },
  taint: { what: "taint label", values: TAINT_LABELS },
  deleteTargetClasses: { what: "path class", values: FACT_VALUE_LISTS.deleteTargetClasses! },
  sensitive: { what: "sensitive path label", values: FACT_VALUE_LISTS.sensitive! },
  writtenSensitive: { what: "sensitive path label", values: FACT_VALUE_LISTS.writtenSensitive! },
};

type Json = unknown;

interface PolicyJson {
  action: { op: string; entity?: { id: string }; entities?: { id: string }[] };
  conditions: { body: Json }[];
  annotations?: Record<string, string>;
}

/** Every problem of the set; `hooks`: the registry entry's, when the set has one. */
export function lintCedarSet(set: CedarPolicySet, hooks?: readonly string[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const offsets = policyOffsets(set);
  for (const [id, policy] of set.policies) {
    const parsed = cedarWasm.policyToJson(policy.text);
    if (parsed.type === "failure") continue; // parse errors are reported by the parser
    const json = parsed.json as unknown as PolicyJson;
    const found: { at: number; rule: string; message: string }[] = [
      ...annotationProblems(policy, json),
      ...hookProblems(policy, json, hooks),
      ...valueProblems(policy, json),
    ];
    for (const problem of found) {
      const at = lineAndColumn(set.text, (offsets.get(id) ?? 0) + problem.at);
      issues.push({ path: id, rule: problem.rule, message: atLine(at, problem.message) });
    }
  }
  return issues;
}

function annotationProblems(policy: CedarPolicyInfo, json: PolicyJson) {
  return Object.keys(json.annotations ?? {})
    .filter((name) => !KNOWN_ANNOTATIONS.includes(name))
    .map((name) => {
      const near = closest(name, KNOWN_ANNOTATIONS);
      return {
        at: Math.max(0, policy.text.indexOf(`@${name}`)),
        rule: "unknown_annotation",
        message: `@${name} is not an annotation hookbus reads${near === undefined ? "" : ` (did you mean @${near}?)`}; it would be ignored. Known: ${KNOWN_ANNOTATIONS.map((a) => `@${a}`).join(", ")}`,
      };
    });
}

/** The hooks a rule's scope names; undefined when it names none (`action` alone: every hook). */
function scopeHooks(json: PolicyJson): string[] | undefined {
  const { op, entity, entities } = json.action;
  if (op === "==" && entity !== undefined) return [entity.id];
  if (op === "in") return (entities ?? (entity === undefined ? [] : [entity])).map((e) => e.id);
  return undefined;
}

function hookProblems(policy: CedarPolicyInfo, json: PolicyJson, hooks?: readonly string[]) {
  const problems: { at: number; rule: string; message: string }[] = [];
  const named = scopeHooks(json);
  const actionAt = Math.max(0, policy.text.indexOf("action"));
  if (hooks !== undefined && named !== undefined && !named.some((h) => hooks.includes(h))) {
    problems.push({
      at: actionAt,
      rule: "hook_not_listed",
      message: `the rule is for ${named.join(", ")}, which the entry does not list (hooks: ${hooks.join(", ")}): it would never run; add the hook to the entry or drop the rule`,
    });
  }
  if (policy.approval !== undefined) {
    const applies = named === undefined ? hooks : named.filter((h) => hooks?.includes(h) ?? true);
    const cannot = (applies ?? []).filter((h) => !HOOKS_THAT_ASK.has(h));
    if (cannot.length > 0) {
      problems.push({
        at: Math.max(0, policy.text.indexOf("@approval")),
        rule: "approval_cannot_ask",
        message: `@approval on a rule for ${cannot.join(", ")}: only before_tool_call can ask a person, so there it would block; scope the rule to action == Action::"before_tool_call"`,
      });
    }
  }
  return problems;
}

function valueProblems(policy: CedarPolicyInfo, json: PolicyJson) {
  const problems: { at: number; rule: string; message: string }[] = [];
  const seen = new Set<string>();
  for (const { attr, value } of closedComparisons(json.conditions.map((c) => c.body))) {
    const closed = CLOSED_VALUES[attr]!;
    if (closed.values.includes(value) || seen.has(`${attr} ${value}`)) continue;
    seen.add(`${attr} ${value}`);
    const near = closest(value, closed.values);
    problems.push({
      at: Math.max(0, policy.text.indexOf(JSON.stringify(value))),
      rule: "unknown_value",
      message: `${JSON.stringify(value)} is not a ${closed.what}${near === undefined ? "" : ` (did you mean ${JSON.stringify(near)}?)`}: the comparison with ${attr} can never hold. Known: ${closed.values.join(", ")}`,
    });
  }
  return problems;
}

/** The attribute a node reads, when it is one of the closed ones (`resource.class`, …). */
function closedAttr(node: Json): string | undefined {
  const access = (node as { ".": { attr?: unknown } } | null)?.["."];
  const attr = access?.attr;
  return typeof attr === "string" && Object.hasOwn(CLOSED_VALUES, attr) ? attr : undefined;
}

/** The string literals a node is or holds (a value, or a set of values). */
function literals(node: Json): string[] {
  const value = (node as { Value?: unknown } | null)?.Value;
  if (typeof value === "string") return [value];
  const set = (node as { Set?: unknown } | null)?.Set;
  return Array.isArray(set) ? set.flatMap((item: Json) => literals(item)) : [];
}

const COMPARISONS = new Set(["==", "!=", "contains", "containsAny", "containsAll"]);

/** Every comparison of a closed attribute with string literals, walked without recursion. */
function closedComparisons(bodies: Json[]): { attr: string; value: string }[] {
  const found: { attr: string; value: string }[] = [];
  const stack: Json[] = [...bodies];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== "object") continue;
    for (const [key, child] of Object.entries(node)) {
      const pair = child as { left?: Json; right?: Json } | null;
      if (COMPARISONS.has(key) && pair !== null && typeof pair === "object") {
        for (const [a, b] of [
          [pair.left, pair.right],
          [pair.right, pair.left],
        ]) {
          const attr = closedAttr(a);
          if (attr !== undefined) found.push(...literals(b).map((value) => ({ attr, value })));
        }
      }
      stack.push(child);
    }
  }
  return found;
}

/** The known word within two edits of `word` (a typo's likely meaning). */
function closest(word: string, known: readonly string[]): string | undefined {
  let best: { word: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance <= 2 && (best === undefined || distance < best.distance))
      best = { word: candidate, distance };
  }
  return best?.word;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost));
    }
    previous = current;
  }
  return previous[b.length]!;
}
