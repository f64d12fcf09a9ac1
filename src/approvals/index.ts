export { answerApproval, listApprovals, showApproval, type AnswerOptions } from "./client.js";
export { ApprovalEntry, approvalIdOf } from "./entry.js";
export { NO_GROUP } from "./settle.js";
export { ApprovalReply, AnswerRequest } from "./wire.js";
