/** Events of the observational hooks: recorded and delivered, never waited for. */
import { z } from "zod";
import { Message, ToolInput } from "../common.js";

export const afterToolCall = z.looseObject({
  toolName: z.string().min(1),
  toolCallId: z.string().optional(),
  params: ToolInput,
  result: z.unknown().optional(),
  error: z.string().optional(),
  durationMs: z.number().min(0).optional(),
  blocked: z
    .boolean()
    .optional()
    .describe("True when a policy blocked the call and the tool never ran."),
  blockReason: z.string().optional(),
  blockedBy: z
    .string()
    .optional()
    .describe("The policy whose decision refused the call, when known."),
  blockSource: z
    .enum(["decision", "after_llm_call_gate", "adapter"])
    .optional()
    .describe(
      "Who refused the call: `decision` (a coordinator's decision, itself recorded as a block), `after_llm_call_gate` (the agent SDK's gate) or `adapter` (e.g. a tool not offered this turn, or a gate that could not decide). The last two are recorded under the `block` outcome.",
    ),
});

export const llmInput = z.looseObject({
  provider: z.string().optional(),
  model: z.string().optional(),
  systemPrompt: z.string().optional(),
  messages: z.array(Message).optional(),
  prompt: z.string().optional(),
  imagesCount: z.int().min(0).optional(),
});

export const TokenUsage = z.looseObject({
  input: z.number().optional(),
  output: z.number().optional(),
  cacheRead: z.number().optional(),
  cacheWrite: z.number().optional(),
  total: z.number().optional(),
});

export const llmOutput = z.looseObject({
  provider: z.string().optional(),
  model: z.string().optional(),
  assistantTexts: z.array(z.string()).optional(),
  lastAssistant: z.unknown().optional(),
  usage: TokenUsage.optional(),
});

export const sessionStart = z.looseObject({
  sessionId: z.string().optional(),
  resumedFrom: z.string().optional(),
});

export const sessionEnd = z.looseObject({
  sessionId: z.string().optional(),
  messageCount: z.int().min(0).optional(),
  durationMs: z.number().min(0).optional(),
});

export const agentEnd = z.looseObject({
  messages: z.array(Message).optional(),
  success: z.boolean(),
  error: z.string().optional(),
  durationMs: z.number().min(0).optional(),
});
