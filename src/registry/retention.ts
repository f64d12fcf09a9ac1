/**
 * Retention by rule (docs/privacy.md): the registry's `retention` section says how many days a
 * data subject's key is kept, per namespace and optionally per agent. A key older than its rule
 * is erased by `hookbus erase --retention` (src/erasure/retention.ts), which the privacy role runs
 * on a schedule: erasing it makes every record sealed under it unreadable, as `hookbus erase` does.
 *
 * The age is the key's, not a record's: a key is made on its subject's first record, so no record
 * stays readable longer than its rule (plus the time between two runs). A later record of the
 * subject gets a new key, erased in its turn.
 */
import { z } from "zod";

/** A hundred years: a longer rule is a typo, not a retention period. */
export const MAX_RETENTION_DAYS = 36_500;
/** Agents with a rule of their own; every run looks each key's agent up here. */
export const MAX_RETENTION_AGENTS = 1000;
export const MAX_RETENTION_AGENT_CHARS = 256;
export const DAY_MS = 86_400_000;

const Days = z
  .int()
  .min(0)
  .max(MAX_RETENTION_DAYS)
  .describe(
    `Days a subject's data key is kept, 0 to ${MAX_RETENTION_DAYS}; 0 erases at the next run.`,
  );

export const RetentionRules = z
  .strictObject({
    days: Days.optional().describe(
      "The namespace's rule; absent: keys of agents without a rule of their own are kept.",
    ),
    agents: z
      .record(z.string().min(1).max(MAX_RETENTION_AGENT_CHARS), Days)
      .optional()
      .meta({
        maxProperties: MAX_RETENTION_AGENTS,
        propertyNames: { minLength: 1, maxLength: MAX_RETENTION_AGENT_CHARS },
      })
      .describe(
        `Rules of single agents (by agent id, at most ${MAX_RETENTION_AGENTS}), in place of the namespace's for the keys their records made.`,
      ),
  })
  .meta({
    id: "RetentionRules",
    description:
      "How long each data subject's key is kept before `hookbus erase --retention` erases it (docs/privacy.md).",
  });
export type RetentionRules = z.infer<typeof RetentionRules>;

/** The rule a key made by `agent` follows: its agent's, else the namespace's, else none. */
export interface AppliedRule {
  /** `namespace` or `agent:<id>`: what the erasure record names. */
  name: string;
  days: number;
}

export function ruleFor(rules: RetentionRules, agent: string | undefined): AppliedRule | undefined {
  const agents = rules.agents;
  // Own members only: "constructor" names an agent, never Object's prototype.
  if (agent !== undefined && agents !== undefined && Object.hasOwn(agents, agent))
    return { name: `agent:${agent}`, days: agents[agent]! };
  return rules.days === undefined ? undefined : { name: "namespace", days: rules.days };
}

/** Whether a key made at `madeAt` has outlived `rule` at `now`. */
export const isExpired = (rule: AppliedRule, madeAt: Date, now: Date): boolean =>
  now.getTime() - madeAt.getTime() >= rule.days * DAY_MS;

/** Checks the schema cannot word well (entry count, reserved names), as registry issues. */
export function retentionIssues(value: unknown): { path: string; rule: string; message: string }[] {
  const agents = (value as { retention?: { agents?: unknown } } | null)?.retention?.agents;
  if (typeof agents !== "object" || agents === null || Array.isArray(agents)) return [];
  const keys = Object.keys(agents);
  const issues = [];
  if (keys.length > MAX_RETENTION_AGENTS)
    issues.push({
      path: "retention.agents",
      rule: "too_many_entries",
      message: `${keys.length} agents; at most ${MAX_RETENTION_AGENTS}`,
    });
  if (keys.includes("__proto__"))
    issues.push({
      path: "retention.agents.__proto__",
      rule: "reserved_name",
      message: "a reserved name",
    });
  return issues;
}
