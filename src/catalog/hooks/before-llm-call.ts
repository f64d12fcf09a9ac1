import { z } from "zod";
import { blockFields, decisionFields, Message, ToolDefinition } from "../common.js";

export const event = z.looseObject({
  messages: z.array(Message).describe("The conversation about to be sent."),
  systemPrompt: z.string().optional(),
  tools: z.array(ToolDefinition).optional().describe("The tools offered to the model."),
  model: z.string().optional(),
  provider: z.string().optional(),
  iteration: z
    .int()
    .min(0)
    .optional()
    .describe("0 for the first LLM call of a run, then one more per tool-loop iteration."),
});

export const verdict = z.strictObject({
  messages: z
    .array(Message)
    .optional()
    .describe("Replace the conversation. [] is an explicit (logged) empty history."),
  systemPrompt: z.string().optional().describe('Replace the system prompt; "" clears it.'),
  tools: z
    .array(ToolDefinition)
    .optional()
    .describe(
      "Allowlist by name: the original tools are filtered to these names. Can only narrow; [] removes every tool.",
    ),
  ...blockFields,
});

export const decision = z.strictObject({
  ...decisionFields,
  messages: z.array(Message).optional(),
  systemPrompt: z.string().optional(),
  tools: z
    .array(ToolDefinition)
    .optional()
    .describe("The original tool definitions that every policy allowed."),
});
