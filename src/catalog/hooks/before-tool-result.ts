import { z } from "zod";
import { blockFields, decisionFields, ToolInput, ToolResultContent } from "../common.js";

export const event = z.looseObject({
  toolName: z.string().min(1),
  toolCallId: z.string().optional(),
  params: ToolInput,
  result: z
    .unknown()
    .optional()
    .describe("The tool's result as the agent holds it (absent when the tool returned nothing)."),
  isError: z.boolean().describe("Whether the tool failed."),
  durationMs: z.number().min(0).optional(),
});

export const verdict = z.strictObject({
  content: ToolResultContent.optional().describe("Replace what the model sees of the result."),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  content: ToolResultContent.optional(),
});
