import { z } from "zod";
import { blockFields, decisionFields, ToolParams } from "../common.js";

export const event = z.looseObject({
  toolName: z.string().min(1),
  toolCallId: z.string().optional(),
  params: ToolParams,
});

export const verdict = z.strictObject({
  params: ToolParams.optional().describe("Replace the tool's arguments."),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  params: ToolParams.optional(),
});
