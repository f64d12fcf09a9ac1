import { z } from "zod";
import { blockFields, decisionFields, Message, ToolCall } from "../common.js";

export const event = z.looseObject({
  toolCalls: z.array(ToolCall).describe("The tool calls the model asked for, before any runs."),
  response: z
    .union([z.string(), Message])
    .optional()
    .describe("The assistant's answer (text or message)."),
  model: z.string().optional(),
  provider: z.string().optional(),
  iteration: z.int().min(0).optional(),
});

const AllowedToolCall = z.looseObject({ id: z.string().optional() });

export const verdict = z.strictObject({
  toolCalls: z
    .array(AllowedToolCall)
    .optional()
    .describe(
      "Allowlist by id: only these calls may run. Can only narrow. Entries without an id allow nothing (a call without an id is blocked while an allowlist is active).",
    ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  toolCalls: z
    .array(ToolCall)
    .optional()
    .describe(
      "Present when an allowlist is active: the original calls every policy allowed. Absent means all may run.",
    ),
});
