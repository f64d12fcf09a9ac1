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
      "Replace every assistant text of the run (redaction across turns). Entries beyond the original count are ignored. Setting it locks content.",
    ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  content: z.string().optional(),
  allContent: z.array(z.string()).optional(),
});
