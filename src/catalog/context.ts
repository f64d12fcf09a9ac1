/**
 * The context every call carries. `agentId` and `sessionKey` become subject tokens and log keys,
 * so they are required and non-empty; any string is allowed (the bus encodes it).
 */
import { z } from "zod";

const sessionFields = {
  agentId: z.string().min(1).describe("The agent instance; any string."),
  sessionKey: z.string().min(1).describe("The conversation/session; any string."),
  channel: z.string().optional().describe("Where the conversation happens (slack, web, cli, ...)."),
  traceId: z
    .string()
    .optional()
    .describe("A distributed-trace id to correlate with the agent's own traces."),
};

/** Context for hooks that fire outside a run (session start and end). */
export const SessionContext = z.looseObject({
  ...sessionFields,
  runId: z.string().min(1).optional().describe("The run, when the hook fires inside one."),
});

/**
 * Context for hooks that fire inside one run of the agent loop. `runId` is optional (frameworks
 * such as OpenClaw do not always have one): without it, the session's calls share one
 * after_llm_call gate, and the adapters in `hookbus/ai` derive a run id per run.
 */
export const RunContext = z.looseObject({
  ...sessionFields,
  runId: z
    .string()
    .min(1)
    .optional()
    .describe("One run of the agent loop (one user turn); when absent, the session is the run."),
});

/** Context for hooks about one tool call. */
export const ToolContext = RunContext.extend({
  toolName: z.string().optional(),
  toolCallId: z.string().optional(),
});

export type SessionContext = z.infer<typeof SessionContext>;
export type RunContext = z.infer<typeof RunContext>;
export type ToolContext = z.infer<typeof ToolContext>;
