import { z } from "zod";
import { decisionFields } from "../common.js";

export const ReplyPayload = z.looseObject({ text: z.string() }).meta({
  id: "ReplyPayload",
  description: "A synthetic reply sent instead of running the agent.",
});

export const event = z.looseObject({
  cleanedBody: z
    .string()
    .describe("The user's message after commands and directives were handled."),
});

export const verdict = z.strictObject({
  reply: ReplyPayload.optional().describe(
    "Short-circuit: answer with this instead of running the agent. First reply by priority wins.",
  ),
  reason: z
    .string()
    .optional()
    .describe("Why the reply was given; kept from the policy whose reply won."),
});

export const decision = z.strictObject({
  ...decisionFields,
  reply: ReplyPayload.optional(),
  reason: z.string().optional(),
});
