/**
 * A Cedar policy set as hookbus uses it: parsed once, every policy given a stable id (its `@id`
 * annotation, else `policy<N>` by position) and the annotations that map a decision onto a
 * verdict (`@reason`, `@approval`, `@severity`), then pre-parsed into the Cedar engine under its
 * content hash so each evaluation skips parsing. Content-addressed: two registry revisions with
 * the same text share one parsed set, and a call decided under an older revision still evaluates
 * exactly the text it was admitted with.
 */
import { cedarSetHash } from "./set-hash.js";
import { ApprovalSeverity } from "../catalog/approval.js";
import { HookbusError, type ValidationIssue } from "../foundation/errors.js";
import {
  cedarWasm,
  describeErrors,
  markPreparsed,
  type PolicyJson,
  type PolicyToJsonAnswer,
} from "./wasm.js";
import { contextKeysOfJson, type ContextKeys } from "./context-keys.js";
import { indexScopes } from "./scope-index.js";
import { compileDirect } from "./direct.js";
import { assertCedarLimits } from "./limits.js";

export interface CedarPolicyInfo {
  id: string;
  effect: "permit" | "forbid";
  /** `@reason("...")`: the block reason (and the approval's description). */
  reason?: string;
  /** `@approval("title")` on a forbid: ask a person instead of blocking. */
  approval?: string;
  severity?: ApprovalSeverity;
  text: string;
}

export interface CedarPolicySet {
  /** `sha256:<hex>` of the source text: recorded as the policy's version. */
  readonly hash: string;
  /** Where the text came from (a file name), for messages. */
  readonly source: string;
  readonly text: string;
  readonly policies: ReadonlyMap<string, CedarPolicyInfo>;
  /** With a permit, the set is an allowlist: a request no permit matches is blocked. */
  readonly hasPermit: boolean;
  /** The id the Cedar engine caches the parsed set under. */
  readonly engineId: string;
  /** The context attributes its policies read (requests carry only those). */
  readonly contextKeys: ContextKeys;
  /**
   * Whether a policy may read the secret facts (`call.secrets`, `resultSecrets`,
   * `contentSecrets`): finding secrets scans the whole text (~40 µs per KiB), so a set that never
   * names them does not pay for it. Conservative: the word anywhere in the text, or the whole
   * context used as a value.
   */
  readonly readsSecrets: boolean;
}

const ID_PATTERN = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Parse a policy set; every problem is reported at once (HOOKBUS_INVALID_CEDAR). A set over a
 * limit is refused with that limit's code before the engine sees it (limits.ts).
 */
export function parseCedarPolicySet(text: string, source = "cedar policy set"): CedarPolicySet {
  assertCedarLimits(text, source);
  const parts = cedarWasm.policySetTextToParts(text);
  if (parts.type === "failure") throw invalid(source, issuesOf("", parts.errors));
  if (parts.policy_templates.length > 0) {
    throw invalid(source, [
      { path: "", rule: "cedar_template", message: "policy templates are not supported" },
    ]);
  }
  const answers = parts.policies.map((policyText) => cedarWasm.policyToJson(policyText));
  return buildCedarPolicySet(text, source, parts.policies, answers);
}

/**
 * A set from its text already split into policies and their JSON (by this thread's engine, or by
 * load-worker.ts off the decision path). `preparse: false` (the load thread already pre-parsed it
 * once, so it does): the set is pre-parsed into this thread's engine on first need, only the
 * sub-sets calls need (scope-index.ts), since pre-parsing costs ~40 µs per policy (more on a
 * busy machine) of the thread that decides calls.
 */
export function buildCedarPolicySet(
  text: string,
  source: string,
  texts: readonly string[],
  answers: readonly PolicyToJsonAnswer[],
  preparse = true,
): CedarPolicySet {
  const issues: ValidationIssue[] = [];
  const policies = new Map<string, CedarPolicyInfo>();
  const json: PolicyJson[] = [];
  texts.forEach((policyText, index) => {
    const answer = answers[index];
    const info = answer && policyInfo(policyText, answer, index, issues);
    if (info === undefined || answer?.type !== "success") return;
    if (policies.has(info.id)) {
      issues.push({ path: info.id, rule: "duplicate_id", message: `@id("${info.id}") repeats` });
    }
    policies.set(info.id, info);
    json.push(answer.json);
  });
  if (issues.length > 0) throw invalid(source, issues);
  const hash = cedarSetHash(text);
  const engineId = `hookbus:${hash}`;
  if (preparse) {
    const staticPolicies = Object.fromEntries([...policies].map(([id, p]) => [id, p.text]));
    const parsed = cedarWasm.preparsePolicySet(engineId, { staticPolicies });
    if (parsed.type === "failure") throw invalid(source, issuesOf("", parsed.errors));
  }
  const hasPermit = [...policies.values()].some((p) => p.effect === "permit");
  const contextKeys = contextKeysOfJson(json);
  const readsSecrets = contextKeys === "all" || /secrets/i.test(text);
  const set = { hash, source, text, policies, hasPermit, engineId, contextKeys, readsSecrets };
  if (preparse) markPreparsed(set);
  indexScopes(set, json);
  compileDirect(set, json);
  return set;
}

function policyInfo(
  text: string,
  json: PolicyToJsonAnswer,
  index: number,
  issues: ValidationIssue[],
): CedarPolicyInfo | undefined {
  if (json.type === "failure") {
    issues.push(...issuesOf(`policy${index}`, json.errors));
    return undefined;
  }
  const annotations = json.json.annotations ?? {};
  const id = annotations.id ?? `policy${index}`;
  if (!ID_PATTERN.test(id)) {
    issues.push({ path: id, rule: "invalid_id", message: `@id must match ${ID_PATTERN.source}` });
  }
  const info: CedarPolicyInfo = { id, effect: json.json.effect, text };
  if (annotations.reason !== undefined) info.reason = annotations.reason;
  if (annotations.approval !== undefined) {
    if (json.json.effect !== "forbid" || annotations.approval.trim() === "") {
      issues.push({
        path: id,
        rule: "invalid_approval",
        message: '@approval("title") needs a non-empty title and belongs on a forbid',
      });
    }
    info.approval = annotations.approval.slice(0, 200);
  }
  if (annotations.severity !== undefined) {
    const severity = ApprovalSeverity.safeParse(annotations.severity);
    if (severity.success) info.severity = severity.data;
    else
      issues.push({
        path: id,
        rule: "invalid_severity",
        message: `@severity is one of ${ApprovalSeverity.options.join(", ")}`,
      });
  }
  return info;
}

function issuesOf(
  path: string,
  errors: readonly { message: string; help?: string | null }[],
): ValidationIssue[] {
  return describeErrors(errors).map((message) => ({ path, rule: "cedar", message }));
}

export function invalid(source: string, issues: ValidationIssue[]): HookbusError {
  const list = issues.map((i) => `  ${i.path || "(set)"}: ${i.message}`).join("\n");
  return new HookbusError(
    "HOOKBUS_INVALID_CEDAR",
    `${source} is not a valid Cedar policy set:\n${list}`,
    {
      source,
      issues,
    },
  );
}
