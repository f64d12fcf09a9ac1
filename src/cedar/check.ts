/**
 * The check `registry apply`, `registry validate` and `policy validate` run on every Cedar set
 * of a policy document: it parses, and it type-checks against the schema generated from the hook
 * catalog, and it refuses what Cedar accepts but hookbus would misread (lint.ts). Every problem of
 * every set is reported at once, with its line and column.
 */
import { HookbusError, isHookbusError, type ValidationIssue } from "../foundation/errors.js";
import { cedarLimitError, cedarLimitIssues, type CedarLimitIssue } from "./limits.js";
import { parseCedarPolicySet, type CedarPolicySet } from "./policy-set.js";
import { lintCedarSet } from "./lint.js";
import { locatedSyntaxIssues } from "./locate.js";
import { cedarTypeIssues } from "./validate.js";

export interface CedarEntry {
  name: string;
  cedar: string;
  source?: string | undefined;
  /** The registry entry's hooks (lint.ts: rules for hooks it does not list); absent for a file. */
  hooks?: readonly string[] | undefined;
}

/**
 * The parsed sets by policy name; throws HOOKBUS_INVALID_CEDAR naming each bad policy. A set over
 * a limit (limits.ts) is refused first, with that limit's own code, before any set is parsed.
 */
export function checkCedarEntries(entries: readonly CedarEntry[]): Map<string, CedarPolicySet> {
  assertEntryLimits(entries);
  const issues: ValidationIssue[] = [];
  const sets = new Map<string, CedarPolicySet>();
  for (const entry of entries) {
    const label = entry.source === undefined ? entry.name : `${entry.name} (${entry.source})`;
    try {
      const set = parseCedarPolicySet(entry.cedar, label);
      const typeIssues = cedarTypeIssues(set);
      typeIssues.push(...lintCedarSet(set, entry.hooks));
      if (typeIssues.length === 0) sets.set(entry.name, set);
      issues.push(...typeIssues.map((i) => ({ ...i, path: `${entry.name}: ${i.path}` })));
    } catch (error) {
      if (!isHookbusError(error) || error.code !== "HOOKBUS_INVALID_CEDAR") throw error;
      const located = locatedSyntaxIssues(entry.cedar);
      const found = located.length > 0 ? located : (error.details.issues ?? []);
      issues.push(...found.map((i) => ({ ...i, path: `${entry.name}: ${i.path}` })));
    }
  }
  if (issues.length > 0) {
    const list = issues.map((i) => `  ${i.path}: ${i.message}`).join("\n");
    throw new HookbusError("HOOKBUS_INVALID_CEDAR", `Cedar policies refused:\n${list}`, { issues });
  }
  return sets;
}

function assertEntryLimits(entries: readonly CedarEntry[]): void {
  const issues: CedarLimitIssue[] = entries.flatMap((entry) =>
    cedarLimitIssues(entry.cedar).map((i) => ({ ...i, path: `${entry.name}: ${i.path}` })),
  );
  const error = cedarLimitError(issues, "Cedar policies");
  if (error !== undefined) throw error;
}
