/**
 * `requireApproval`: a verdict that holds an action until a person answers (docs/approvals.md).
 *
 * Only `before_tool_call` takes it (docs/approvals.md, "Which hooks"): an approval must be for the
 * exact arguments that will run, and only before_tool_call sees them after every rewrite.
 */
import { z } from "zod";

/** Longest a request may wait for a person (24 h): a pending call holds an agent. */
export const MAX_APPROVAL_TIMEOUT_MS = 86_400_000;
/** Shortest wait: below a second no person can answer, and the request is a block in disguise. */
export const MIN_APPROVAL_TIMEOUT_MS = 1000;
/** The wait when a policy names none (5 minutes). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;
/** Group names are subject tokens of the answer subject (docs/approvals.md). */
export const APPROVER_GROUP_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export const ApprovalSeverity = z
  .enum(["low", "medium", "high", "critical"])
  .meta({ id: "ApprovalSeverity", description: "How much is at stake, for whoever answers." });
export type ApprovalSeverity = z.infer<typeof ApprovalSeverity>;

export const SEVERITY_ORDER: readonly ApprovalSeverity[] = ["low", "medium", "high", "critical"];

export const TimeoutBehavior = z.enum(["deny", "allow"]).meta({
  id: "ApprovalTimeoutBehavior",
  description: "What happens when nobody answers in time: deny (a block, the default) or allow.",
});
export type TimeoutBehavior = z.infer<typeof TimeoutBehavior>;

const timeoutMs = z.int().min(MIN_APPROVAL_TIMEOUT_MS).max(MAX_APPROVAL_TIMEOUT_MS);

/** What one policy asks for. */
export const RequireApproval = z
  .strictObject({
    title: z.string().min(1).max(200),
    description: z.string().max(4000).optional(),
    severity: ApprovalSeverity.optional().describe("Default medium."),
    timeoutMs: timeoutMs.optional().describe(`Default ${DEFAULT_APPROVAL_TIMEOUT_MS} ms.`),
    timeoutBehavior: TimeoutBehavior.optional().describe("Default deny."),
    approvers: z
      .string()
      .regex(APPROVER_GROUP_PATTERN)
      .optional()
      .describe("A group of approvers (hookbus auth `approverGroups`); absent: any approver."),
  })
  .meta({ id: "RequireApproval" });
export type RequireApproval = z.infer<typeof RequireApproval>;

/** One asking policy's request as the merged decision lists it (defaults filled in). */
export const ApprovalAsk = z.strictObject({
  policy: z.string(),
  title: z.string(),
  description: z.string().optional(),
  severity: ApprovalSeverity,
  timeoutMs,
  timeoutBehavior: TimeoutBehavior,
  approvers: z.string().optional(),
});
export type ApprovalAsk = z.infer<typeof ApprovalAsk>;

/** The one request a person answers, combined from every enforced policy that asked. */
export const ApprovalRequest = z
  .strictObject({
    title: z.string().describe("The highest-priority asking policy's title."),
    description: z.string().optional(),
    severity: ApprovalSeverity.describe("The highest severity asked."),
    timeoutMs: timeoutMs.describe("The shortest wait asked."),
    timeoutBehavior: TimeoutBehavior.describe("allow only if every asking policy said allow."),
    approvers: z
      .array(z.string())
      .describe("Every group named, sorted; each must approve (empty: any approver)."),
    askedBy: z.array(ApprovalAsk).min(1).describe("Every asking policy, in merge order."),
  })
  .meta({ id: "ApprovalRequest" });
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** How a pending decision was settled, as the agent's final decision carries it. */
export const ApprovalResolutionInfo = z
  .strictObject({
    id: z.string(),
    resolution: z
      .enum(["approved", "denied", "timed-out", "erased"])
      .describe(
        "`erased`: the call's data subject was erased while it was pending (docs/privacy.md).",
      ),
    by: z
      .array(z.string())
      .describe("Who answered (approver names); empty for a timeout and an erasure."),
    reason: z.string().optional(),
    recordSeq: z.int().min(1).optional().describe("The log sequence of the resolution record."),
  })
  .meta({ id: "ApprovalResolutionInfo" });
export type ApprovalResolutionInfo = z.infer<typeof ApprovalResolutionInfo>;
