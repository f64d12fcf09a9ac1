/**
 * Type-checks a Cedar policy set against the schema generated from the hook catalog (Cedar's
 * own validator, strict mode): a policy that reads a field its hook does not have, compares a
 * string with a number, or names an action that is not a hook is refused with
 * HOOKBUS_INVALID_CEDAR before it ever runs.
 */
import type { ValidationIssue } from "../foundation/errors.js";
import { invalid, type CedarPolicySet } from "./policy-set.js";
import { cedarSchemaText } from "./schema.js";
import { locatedTypeMessage, policyOffsets } from "./locate.js";
import { cedarWasm, describeErrors } from "./wasm.js";

let schemaText: string | undefined;

/** The schema text, generated once per process (the catalog does not change while it runs). */
export function cedarSchema(): string {
  schemaText ??= cedarSchemaText();
  return schemaText;
}

/** Every type error of the set (empty when it type-checks). */
export function cedarTypeIssues(set: CedarPolicySet): ValidationIssue[] {
  const staticPolicies = Object.fromEntries([...set.policies].map(([id, p]) => [id, p.text]));
  const answer = cedarWasm.validate({
    schema: cedarSchema(),
    policies: { staticPolicies },
    validationSettings: { mode: "strict" },
  });
  if (answer.type === "failure") {
    return describeErrors(answer.errors).map((message) => ({
      path: "",
      rule: "cedar_schema",
      message,
    }));
  }
  const offsets =
    answer.validationErrors.length > 0 ? policyOffsets(set) : new Map<string, number>();
  return answer.validationErrors.map((e) => ({
    path: e.policyId,
    rule: "cedar_type",
    message: locatedTypeMessage(set, e.policyId, e.error, offsets),
  }));
}

/** Refuse a set that does not type-check (HOOKBUS_INVALID_CEDAR). */
export function assertCedarTypes(set: CedarPolicySet): void {
  const issues = cedarTypeIssues(set);
  if (issues.length > 0) throw invalid(set.source, issues);
}
