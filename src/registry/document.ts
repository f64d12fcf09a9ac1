/**
 * The registry document: the declarative policy set operators apply from a file. The coordinator
 * asks exactly the policies listed for a hook, so a policy that is declared but has no live
 * worker is an error handled by its failure mode, never a silent gap.
 */
import { z } from "zod";
import {
  HOOK_NAMES,
  MODIFYING_HOOK_NAMES,
  isModifyingHook,
  isHookName,
  type ModifyingHookName,
} from "../catalog/catalog.js";
import { toValidationIssues } from "../catalog/validate.js";
import { HookbusError, type ValidationIssue } from "../foundation/errors.js";
import { FailMode, PolicyMode } from "../merge/outcome.js";
import { POLICY_NAME_PATTERN } from "../bus/tokens.js";
import { pointerProblem, RedactionRule } from "../log/redaction.js";
import { TOOL_CLASSES } from "../vocabulary/classes.js";
import type { VocabularyExtension } from "../vocabulary/vocabulary.js";
import { RetentionRules, retentionIssues } from "./retention.js";
import { streamEntryIssues } from "./stream-entry.js";

export const DEFAULT_POLICY_TIMEOUT_MS = 1000;

export const PolicyKind = z.enum(["worker", "cedar"]).meta({
  id: "PolicyKind",
  description:
    "worker: asked over NATS (a TypeScript or Python worker). cedar: a Cedar policy set the coordinator evaluates in-process (docs/cedar.md).",
});
export type PolicyKind = z.infer<typeof PolicyKind>;

export const PolicyEntry = z
  .strictObject({
    name: z
      .string()
      .regex(POLICY_NAME_PATTERN, "policy names are 1-64 characters of A-Z a-z 0-9 _ -")
      .describe("Unique; the subject token and queue group of the policy's workers."),
    description: z.string().optional(),
    hooks: z
      .array(z.string())
      .min(1)
      .describe(`Modifying hooks this policy is asked about: ${MODIFYING_HOOK_NAMES.join(", ")}.`),
    priority: z.int().describe("Higher is asked first in the merge order; ties go by name."),
    timeoutMs: z
      .int()
      .min(1)
      .max(600_000)
      .default(DEFAULT_POLICY_TIMEOUT_MS)
      .describe("How long to wait for this policy, bounded by the call's own deadline."),
    failMode: FailMode.optional().describe(
      "Absent: the hook's default (tool and output gates fail closed).",
    ),
    mode: PolicyMode.default("enforce"),
    kind: PolicyKind.optional().describe("Absent: worker."),
    source: z
      .string()
      .min(1)
      .optional()
      .describe(
        "kind cedar: the .cedar file, relative to the registry file; `registry apply` stores its text in `cedar`.",
      ),
    cedar: z
      .string()
      .min(1)
      .optional()
      .describe(
        "kind cedar: the policy set's text (written by `registry apply` from `source`, or given inline).",
      ),
    stream: z
      .boolean()
      .optional()
      .describe(
        "before_response_emit only: also asked about windows of a streamed answer as it streams (docs/streaming.md); absent or false: the whole answer only, and a streamed answer is held while the policy is registered.",
      ),
    facts: z
      .boolean()
      .optional()
      .describe(
        "Worker policies only: its policy requests carry the call's fact set (`facts`: `tools.facts` in the TypeScript SDK, `call.facts` in Python; docs/facts.md). Absent or false: they carry none, and a call no policy reads facts for never computes them. A Cedar set gets `context.facts` when its text reads it.",
      ),
  })
  .meta({ id: "PolicyEntry" });

/** Bounds of the registry's tool vocabulary: every coordinator holds it and classifies with it. */
export const MAX_VOCABULARY_NAMES = 1000;
/** Prefixes are tried one by one on a name no exact entry knows, so fewer of them. */
export const MAX_VOCABULARY_PREFIXES = 100;
export const MAX_VOCABULARY_KEY_CHARS = 256;

const ToolClassSchema = z.enum(TOOL_CLASSES, {
  error: (issue) =>
    `unknown tool class ${JSON.stringify(issue.input)}; known: ${TOOL_CLASSES.join(", ")}`,
});

/** One table of the vocabulary; its bounds are checked in vocabularyIssues (one message each). */
function vocabularyTable(description: string, max: number) {
  return z
    .record(z.string(), ToolClassSchema)
    .optional()
    .meta({
      maxProperties: max,
      propertyNames: { minLength: 1, maxLength: MAX_VOCABULARY_KEY_CHARS },
    })
    .describe(`${description} (at most ${max}).`);
}

export const RegistryToolVocabulary = z
  .strictObject({
    names: vocabularyTable(
      "Exact tool names and their classes; matched in any case too",
      MAX_VOCABULARY_NAMES,
    ),
    prefixes: vocabularyTable(
      "Tool name prefixes and their classes; tried after every exact name, longest first",
      MAX_VOCABULARY_PREFIXES,
    ),
  })
  .meta({
    id: "RegistryToolVocabulary",
    description:
      "Your own tools' classes, added to the shipped vocabulary (yours win) for Cedar policies, emergency stops by class and replay (docs/vocabulary.md).",
  });

/** Bounds of `internalDomains`: a domain name is at most 253 characters (RFC 1035). */
export const MAX_INTERNAL_DOMAINS = 256;
const MAX_DOMAIN_CHARS = 253;

export const RegistryDocument = z
  .strictObject({
    policies: z.array(PolicyEntry),
    toolVocabulary: RegistryToolVocabulary.optional(),
    internalDomains: z
      .array(z.string().min(1).max(MAX_DOMAIN_CHARS))
      .max(MAX_INTERNAL_DOMAINS)
      .optional()
      .describe(
        `Your own mail domains, each with its subdomains: recipients there are internal in the facts (docs/facts.md) (at most ${MAX_INTERNAL_DOMAINS}).`,
      ),
    redact: z
      .array(RedactionRule)
      .optional()
      .describe(
        "Values to mask or hash in log records before they are written (docs/redaction.md).",
      ),
    retention: RetentionRules.optional(),
  })
  .meta({ id: "RegistryDocument", description: "The policy set (`hookbus registry apply FILE`)." });

export type PolicyEntryInput = z.input<typeof PolicyEntry>;
export type RegistryDocumentInput = z.input<typeof RegistryDocument>;
export type RegistryDocument = z.output<typeof RegistryDocument>;

export interface RegistryPolicy extends Omit<z.output<typeof PolicyEntry>, "hooks"> {
  hooks: ModifyingHookName[];
}

/** Whether the coordinator evaluates this policy itself (a Cedar set) instead of asking workers. */
export function isCedarPolicy(
  policy: RegistryPolicy,
): policy is RegistryPolicy & { cedar: string } {
  return policy.kind === "cedar" && typeof policy.cedar === "string";
}

export interface ValidRegistryDocument {
  policies: RegistryPolicy[];
  /** Redaction rules, in the order they apply; absent when the document has none. */
  redact?: RedactionRule[];
  /** The operator's own tool names and prefixes (`toolVocabulary.extend` takes it as is). */
  toolVocabulary?: VocabularyExtension;
  /** Internal mail domains for the recipients' facts; absent: none is internal. */
  internalDomains?: string[];
  /** How long data keys are kept (docs/privacy.md); absent: until erased by hand. */
  retention?: RetentionRules;
}

/**
 * Checks the schema cannot express (known hooks, uniqueness). Runs on the raw input too, so a
 * file with both kinds of mistakes gets every one reported at once.
 */
function semanticIssues(value: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const names = new Map<string, number>();
  const policies = (value as { policies?: unknown })?.policies;
  if (!Array.isArray(policies)) return issues;
  policies.forEach((raw: unknown, index) => {
    const policy = (typeof raw === "object" && raw !== null ? raw : {}) as {
      name?: unknown;
      hooks?: unknown;
    };
    issues.push(...kindIssues(raw, index), ...streamEntryIssues(raw, index));
    const earlier = typeof policy.name === "string" ? names.get(policy.name) : undefined;
    if (typeof policy.name !== "string") {
      // the schema reports it
    } else if (earlier !== undefined) {
      issues.push({
        path: `policies.${index}.name`,
        rule: "duplicate_policy",
        message: `policy "${policy.name}" is already declared at policies.${earlier}`,
      });
    } else {
      names.set(policy.name, index);
    }
    const seen = new Set<string>();
    const hooks: unknown[] = Array.isArray(policy.hooks) ? policy.hooks : [];
    hooks.forEach((hook, h) => {
      if (typeof hook !== "string") return;
      const path = `policies.${index}.hooks.${h}`;
      if (!isHookName(hook)) {
        issues.push({
          path,
          rule: "unknown_hook",
          message: `unknown hook "${hook}"; known: ${MODIFYING_HOOK_NAMES.join(", ")}`,
        });
      } else if (!isModifyingHook(hook)) {
        issues.push({
          path,
          rule: "observational_hook",
          message: `"${hook}" is observational: workers subscribe to it themselves; the registry lists modifying hooks only`,
        });
      } else if (seen.has(hook)) {
        issues.push({ path, rule: "duplicate_hook", message: `hook "${hook}" is listed twice` });
      }
      seen.add(hook);
    });
  });
  return [
    ...issues,
    ...redactionIssues(value),
    ...vocabularyIssues(value),
    ...retentionIssues(value),
  ];
}

/** Bounds of `toolVocabulary` the schema's messages would not name: entry count, key length. */
function vocabularyIssues(value: unknown): ValidationIssue[] {
  const vocabulary = (value as { toolVocabulary?: unknown })?.toolVocabulary;
  if (typeof vocabulary !== "object" || vocabulary === null) return [];
  const issues: ValidationIssue[] = [];
  const tables = [
    ["names", MAX_VOCABULARY_NAMES],
    ["prefixes", MAX_VOCABULARY_PREFIXES],
  ] as const;
  for (const [field, max] of tables) {
    const table = (vocabulary as Record<string, unknown>)[field];
    if (typeof table !== "object" || table === null || Array.isArray(table)) continue;
    const keys = Object.keys(table);
    const path = `toolVocabulary.${field}`;
    if (keys.length > max) {
      issues.push({
        path,
        rule: "too_many_entries",
        message: `${keys.length} entries; at most ${max}`,
      });
    }
    for (const key of keys) {
      if (key === "") {
        issues.push({ path: `${path}.""`, rule: "empty_name", message: "an empty name" });
      } else if (key === "__proto__") {
        // Parsing would drop it silently (it is an object's prototype, not an entry).
        issues.push({ path: `${path}.${key}`, rule: "reserved_name", message: "a reserved name" });
      } else if (key.length > MAX_VOCABULARY_KEY_CHARS) {
        issues.push({
          path: `${path}.${key.slice(0, 40)}…`,
          rule: "name_too_long",
          message: `a name of ${key.length} characters; at most ${MAX_VOCABULARY_KEY_CHARS}`,
        });
      }
    }
  }
  return issues;
}

/** A cedar entry carries its text (after `registry apply` read `source`); a worker entry has none. */
function kindIssues(raw: unknown, index: number): ValidationIssue[] {
  if (typeof raw !== "object" || raw === null) return [];
  const entry = raw as { kind?: unknown; cedar?: unknown; source?: unknown; facts?: unknown };
  const path = `policies.${index}`;
  if (entry.kind === "cedar" && entry.facts === true) {
    const message =
      "`facts` belongs to a worker policy: a Cedar set gets `context.facts` when its text reads it";
    return [{ path: `${path}.facts`, rule: "facts_kind", message }];
  }
  if (entry.kind === "cedar" && typeof entry.cedar !== "string") {
    const message =
      typeof entry.source === "string"
        ? `the Cedar file "${entry.source}" was not read: apply the registry file with \`hookbus registry apply\`, which stores its text`
        : "a cedar policy names its policy set: `source` (a .cedar file) or `cedar` (the text)";
    return [{ path: `${path}.cedar`, rule: "cedar_missing", message }];
  }
  if (entry.kind !== "cedar" && (entry.cedar !== undefined || entry.source !== undefined)) {
    return [
      {
        path: `${path}.kind`,
        rule: "cedar_kind",
        message: '`source` and `cedar` belong to a policy of kind "cedar"',
      },
    ];
  }
  return [];
}

/** Checks of `redact` rules the schema cannot express: pointers and hook names. */
function redactionIssues(value: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const rules = (value as { redact?: unknown })?.redact;
  if (!Array.isArray(rules)) return issues;
  rules.forEach((raw: unknown, index) => {
    const rule = (typeof raw === "object" && raw !== null ? raw : {}) as {
      pointer?: unknown;
      hooks?: unknown;
    };
    if (typeof rule.pointer === "string") {
      const problem = pointerProblem(rule.pointer);
      if (problem !== undefined) {
        issues.push({ path: `redact.${index}.pointer`, rule: "invalid_pointer", message: problem });
      }
    }
    const seen = new Set<string>();
    const hooks: unknown[] = Array.isArray(rule.hooks) ? rule.hooks : [];
    hooks.forEach((hook, h) => {
      if (typeof hook !== "string") return;
      const path = `redact.${index}.hooks.${h}`;
      if (!isHookName(hook)) {
        issues.push({
          path,
          rule: "unknown_hook",
          message: `unknown hook "${hook}"; known: ${HOOK_NAMES.join(", ")}`,
        });
      } else if (seen.has(hook)) {
        issues.push({ path, rule: "duplicate_hook", message: `hook "${hook}" is listed twice` });
      }
      seen.add(hook);
    });
  });
  return issues;
}

/** Parse and check a registry document; every mistake is reported at once, by path. */
export function parseRegistryDocument(value: unknown, source = "registry"): ValidRegistryDocument {
  const parsed = RegistryDocument.safeParse(value);
  const issues = [
    ...(parsed.success ? [] : toValidationIssues(parsed.error)),
    ...semanticIssues(value),
  ];
  if (issues.length > 0) {
    const list = issues.map((i) => `  ${i.path || "(root)"}: ${i.message} (${i.rule})`).join("\n");
    throw new HookbusError("HOOKBUS_INVALID_REGISTRY", `${source} is invalid:\n${list}`, {
      issues,
    });
  }
  return parsed.data as ValidRegistryDocument; // semanticIssues proved every hook is a modifying hook
}
