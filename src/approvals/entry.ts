/**
 * An approval request as the approvals bucket (`<ns>_approvals`, JetStream KV) keeps it: what the
 * person sees, who has answered, and how it was settled. The bucket is the durable queue: a
 * coordinator or agent restart loses nothing, since every step is a compare-and-set of this entry.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { ApprovalRequest } from "../catalog/approval.js";
import { ToolParams } from "../catalog/common.js";
import { EncryptedContent, erasureSettlementFields, stopCheckFields } from "../log/record.js";

export const ApprovalAnswer = z.strictObject({
  approver: z.string(),
  group: z.string(),
  decision: z.enum(["approve", "deny"]),
  reason: z.string().optional(),
  from: z.string().optional(),
  at: z.iso.datetime(),
});
export type ApprovalAnswer = z.infer<typeof ApprovalAnswer>;

export const Settlement = z.strictObject({
  resolution: z.enum(["approved", "denied", "timed-out", "erased"]),
  effect: z.enum(["allow", "block"]),
  reason: z.string().optional(),
  resolvedAt: z.iso.datetime(),
  ...stopCheckFields,
  ...erasureSettlementFields,
});
export type Settlement = z.infer<typeof Settlement>;

export const ApprovalEntry = z
  .strictObject({
    v: z.literal(1),
    id: z.string(),
    agentId: z.string(),
    sessionKey: z.string(),
    runId: z.string().optional(),
    callId: z.string(),
    hook: z.literal("before_tool_call"),
    callDigest: z.string().regex(/^[0-9a-f]{64}$/),
    decisionSeq: z.int().min(1),
    toolName: z.string(),
    params: ToolParams.optional().describe(
      "The params the approval is for, as merged (rewritten); left out above MAX_SHOWN_PARAMS_BYTES.",
    ),
    paramsDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("sha256 of the params' JSON text: what the approval is for, whatever their size."),
    request: ApprovalRequest,
    decision: z
      .record(z.string(), z.unknown())
      .describe("The pending_approval decision, as the agent got it."),
    requestedAt: z.iso.datetime(),
    expiresAt: z.iso.datetime(),
    answers: z.array(ApprovalAnswer).max(64),
    settlement: Settlement.optional(),
    recordSeq: z.int().min(1).optional().describe("The settlement's log record, once stored."),
    subject: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe(
        "sha256 of the call's data subject, when the namespace encrypts: whose key seals the texts.",
      ),
    encrypted: EncryptedContent.optional().describe(
      "The texts sealed under the subject's key, as stored (docs/privacy.md); absent once opened.",
    ),
  })
  .meta({ id: "ApprovalEntry" });
export type ApprovalEntry = z.infer<typeof ApprovalEntry>;

/**
 * The request's id: derived from the call's scoped id (agent, session, callId), so a re-sent call
 * finds its own request, and two calls never share one (an approval answers one call only).
 */
export function approvalIdOf(callKey: string): string {
  return `a${createHash("sha256").update(callKey, "utf8").digest("hex").slice(0, 31)}`;
}

/** Params larger than this (JSON text) are shown by digest only: an entry must fit one KV value. */
export const MAX_SHOWN_PARAMS_BYTES = 64 * 1024;

export const APPROVAL_ID_PATTERN = /^a[0-9a-f]{31}$/;

export type ApprovalState = "pending" | "settled";

export function stateOf(entry: ApprovalEntry): ApprovalState {
  return entry.settlement === undefined ? "pending" : "settled";
}

/**
 * The places of an entry sealed at rest (docs/privacy.md, "Approvals"): everything a person or a
 * policy wrote about the call. What settles it stays in clear: ids, tool name, digests, groups,
 * timeouts, severity, decisions, times; and the decision's outcome and who decided.
 */
export const APPROVAL_SEALED_PLACES: readonly (readonly string[])[] = [
  ["params", "*"],
  ["decision", "*"],
  ["request", "title"],
  ["request", "description"],
  ["request", "askedBy", "*", "title"],
  ["request", "askedBy", "*", "description"],
  ["answers", "*", "reason"],
  ["settlement", "reason"],
];
