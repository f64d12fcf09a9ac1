import { z } from "zod";
import { ApprovalRequest, ApprovalResolutionInfo, RequireApproval } from "../approval.js";
import { blockFields, decisionFields, ToolInput, ToolParams } from "../common.js";

export const event = z.looseObject({
  toolName: z.string().min(1),
  toolCallId: z.string().optional(),
  params: ToolInput,
});

export const verdict = z.strictObject({
  params: ToolParams.optional().describe("Replace the tool's arguments."),
  requireApproval: RequireApproval.optional().describe(
    "Hold the call until a person approves it (for the merged params); a block beats it.",
  ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  params: ToolParams.optional(),
  requireApproval: ApprovalRequest.optional().describe(
    "Present when outcome is pending_approval: the one request a person answers.",
  ),
  approval: z
    .strictObject({ id: z.string() })
    .optional()
    .describe("Present when outcome is pending_approval: the request's id (docs/approvals.md)."),
  resolvedApproval: ApprovalResolutionInfo.optional().describe(
    "Present on the decision an agent gets after a pending approval was settled.",
  ),
});
