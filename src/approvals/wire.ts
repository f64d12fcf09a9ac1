/**
 * What crosses the wire for approvals (docs/approvals.md, docs/protocol.md):
 *
 *   <ns>.approvals.answer.<approver>.<group>   approver → coordinators   AnswerRequest → AnswerReply
 *   <ns>.approvals.status.<agent>              agent → coordinators      StatusRequest → StatusReply
 *
 * The approver and the agent are the subject's tokens, which the generated NATS permissions bind
 * to a user (`hookbus auth`): a body never says who sent it.
 */
import { z } from "zod";
import { ApprovalEntry, APPROVAL_ID_PATTERN } from "./entry.js";

const id = z.string().regex(APPROVAL_ID_PATTERN);

export const AnswerRequest = z
  .strictObject({
    id,
    decision: z.enum(["approve", "deny"]),
    reason: z.string().max(2000).optional(),
    from: z
      .string()
      .max(200)
      .optional()
      .describe("Where the answer came from, for the record: cli, slack, a ticket URL."),
    callDigest: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional()
      .describe("The digest the approver was shown: the answer is refused for any other call."),
  })
  .meta({ id: "ApprovalAnswerRequest" });
export type AnswerRequest = z.infer<typeof AnswerRequest>;

export const StatusRequest = z.strictObject({ id }).meta({ id: "ApprovalStatusRequest" });
export type StatusRequest = z.infer<typeof StatusRequest>;

export const ApprovalReply = z
  .strictObject({
    id: z.string(),
    state: z.enum(["pending", "settled"]),
    entry: ApprovalEntry,
    decision: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Settled and recorded: the decision the agent follows."),
  })
  .meta({ id: "ApprovalReply" });
export type ApprovalReply = z.infer<typeof ApprovalReply>;
