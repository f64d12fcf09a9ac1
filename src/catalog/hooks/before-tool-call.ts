import { z } from "zod";
import { blockFields, decisionFields, ToolInput, ToolParams } from "../common.js";

export const event = z.looseObject({
  toolName: z.string().min(1),
  toolCallId: z.string().optional(),
  params: ToolInput,
});

export const verdict = z.strictObject({
  params: ToolParams.optional().describe("Replace the tool's arguments."),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  params: ToolParams.optional(),
});
