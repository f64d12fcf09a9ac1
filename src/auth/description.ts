/**
 * The input of `hookbus auth`: who may connect, by role. A short JSON file, e.g.
 *
 *   { "namespace": "hookbus", "agents": ["support-bot"], "policies": ["pii-guard"],
 *     "coordinators": ["c1"], "operators": ["ops"], "auditors": ["audit"],
 *     "approvers": ["alice"], "approverGroups": { "security": ["alice"] } }
 *
 * Every entry becomes one NATS user with its own nkey and the least privilege of its role
 * (src/auth/permissions.ts, docs/security.md).
 */
import { z } from "zod";
import { NAMESPACE_PATTERN } from "../bus/subjects.js";
import { APPROVER_GROUP_PATTERN } from "../catalog/approval.js";
import { POLICY_NAME_PATTERN } from "../bus/tokens.js";
import { HookbusError } from "../foundation/errors.js";

/** Agent ids are encoded into subject tokens; the same characters the call path accepts. */
const AGENT_ID = /^[\x21-\x7e]{1,128}$/;
/** Names of service users: they appear in file names and inbox tokens, so kept plain. */
const SERVICE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** A deployment with more users than this wants accounts or auth callout, not a flat file. */
export const MAX_USERS_PER_ROLE = 10_000;

const names = (pattern: RegExp, what: string) =>
  z
    .array(z.string().regex(pattern, `${what}: ${pattern.source}`))
    .max(MAX_USERS_PER_ROLE)
    .refine((list) => new Set(list).size === list.length, `${what}: duplicate entries`)
    .default([]);

export const AuthDescription = z
  .strictObject({
    namespace: z.string().regex(NAMESPACE_PATTERN).default("hookbus"),
    agents: names(AGENT_ID, "agent id (printable ASCII, no spaces)"),
    policies: names(POLICY_NAME_PATTERN, "policy name"),
    coordinators: names(SERVICE_NAME, "coordinator name"),
    operators: names(SERVICE_NAME, "operator name"),
    auditors: names(SERVICE_NAME, "auditor name"),
    sealers: names(SERVICE_NAME, "sealer name"),
    indexers: names(SERVICE_NAME, "indexer name"),
    /** Who may erase data subjects (`hookbus erase`, docs/privacy.md): the only role that deletes data keys. */
    privacy: names(SERVICE_NAME, "privacy user name"),
    /** People (or bots) who may answer approval requests (docs/approvals.md). */
    approvers: names(SERVICE_NAME, "approver name"),
    /** Named groups of approvers, for requests that name `approvers: "<group>"`. */
    approverGroups: z
      .record(
        z.string().regex(APPROVER_GROUP_PATTERN, `group: ${APPROVER_GROUP_PATTERN.source}`),
        names(SERVICE_NAME, "approver name"),
      )
      .default({}),
  })
  .superRefine((d, ctx) => {
    for (const [group, members] of Object.entries(d.approverGroups))
      for (const member of members)
        if (!d.approvers.includes(member))
          ctx.addIssue({
            code: "custom",
            path: ["approverGroups", group],
            message: `${member} is in group ${group} but not in approvers`,
          });
  });
export type AuthDescription = z.output<typeof AuthDescription>;
export type AuthDescriptionInput = z.input<typeof AuthDescription>;

export type AuthRole =
  | "agent"
  | "worker"
  | "coordinator"
  | "operator"
  | "auditor"
  | "sealer"
  | "indexer"
  | "approver"
  | "privacy";

/** One user to create: its role and the name the role's permissions are scoped to. */
export interface AuthUser {
  role: AuthRole;
  name: string;
  /** Approvers only: the groups the user may answer for. */
  groups?: string[];
}

export function parseAuthDescription(input: unknown): AuthDescription {
  const parsed = AuthDescription.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new HookbusError(
    "HOOKBUS_INVALID_AUTH",
    `invalid auth description at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "unknown"}`,
    { path: issue?.path.join(".") ?? "" },
  );
}

export function usersOf(description: AuthDescription): AuthUser[] {
  return [
    ...description.agents.map((name) => ({ role: "agent" as const, name })),
    ...description.policies.map((name) => ({ role: "worker" as const, name })),
    ...description.coordinators.map((name) => ({ role: "coordinator" as const, name })),
    ...description.operators.map((name) => ({ role: "operator" as const, name })),
    ...description.auditors.map((name) => ({ role: "auditor" as const, name })),
    ...description.sealers.map((name) => ({ role: "sealer" as const, name })),
    ...description.indexers.map((name) => ({ role: "indexer" as const, name })),
    ...description.privacy.map((name) => ({ role: "privacy" as const, name })),
    ...description.approvers.map((name) => ({
      role: "approver" as const,
      name,
      groups: Object.entries(description.approverGroups)
        .filter(([, members]) => members.includes(name))
        .map(([group]) => group)
        .sort(),
    })),
  ];
}
