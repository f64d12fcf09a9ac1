/** hookbus/approvals: answer and read approval requests from outside the agent (docs/approvals.md). */
export { answerApproval, listApprovals, showApproval, type AnswerOptions } from "./client.js";
export { ApprovalEntry, approvalIdOf } from "./entry.js";
export { ApprovalReply, AnswerRequest } from "./wire.js";
