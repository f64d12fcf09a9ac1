import { z } from "zod";
import { blockFields, decisionFields } from "../common.js";

export const event = z.looseObject({
  content: z.string().describe("The final assistant text about to be delivered."),
  allContent: z
    .array(z.string())
    .describe("Every assistant text of this run, in order (the last is usually `content`)."),
  channel: z.string().optional(),
  messageCount: z.int().min(0).optional(),
});

export const verdict = z.strictObject({
  content: z
    .string()
    .optional()
    .describe(
      'Replace the final text. "" blocks the response. Setting it locks allContent for lower-priority policies.',
    ),
  allContent: z
    .array(z.string())
    .optional()
    .describe(
      "The complete replacement of the run's assistant texts (redaction across turns), bounded by the original: entries beyond the original count are ignored, a shorter list drops the texts it does not list, [] removes them all. Setting it locks content.",
    ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  content: z.string().optional(),
  allContent: z.array(z.string()).optional(),
});
