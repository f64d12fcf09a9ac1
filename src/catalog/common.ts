/**
 * Building blocks shared by the hook schemas. Everything an agent sends is a *loose* object:
 * real LLM APIs add fields every month (cache hints, reasoning parts, provider metadata) and a
 * policy layer that silently dropped them would corrupt the conversation it forwards. What a
 * policy sends back is *strict* (see the verdict schemas): a misspelled field must be an error,
 * never a silently ignored redaction.
 */
import { z } from "zod";

export const ContentPart = z.looseObject({ type: z.string() }).meta({
  id: "ContentPart",
  description: "One part of a message (text, image, tool_use, tool_result, ...).",
});

export const MessageContent = z.union([z.string(), z.array(ContentPart), z.null()]).meta({
  description: "A plain string, an array of content parts, or null (OpenAI assistant tool turns).",
});

/**
 * A chat message (`{role, content, ...}`), or an OpenAI Responses-API item that is not a role
 * message (`function_call`, `function_call_output`, `reasoning`, ...: they carry `type`, not
 * `role`). Before, such a conversation was refused with `messages.1.role: expected string`
 * (issue 13). One object with a refinement rather than a union, so a bad field is still named
 * (`messages.0.role: expected string`) instead of "invalid union".
 */
export const Message = z
  .looseObject({
    role: z.string().min(1).optional(),
    type: z.string().min(1).optional(),
    content: MessageContent.optional(),
  })
  .refine((m) => m.role !== undefined || m.type !== undefined, {
    message: "a message needs a role (chat message) or a type (Responses-API item)",
    path: ["role"],
  })
  .meta({
    id: "Message",
    description:
      "A chat message as any major LLM API shapes it (`{role, content, ...}`), or a Responses-API item without a role (`{type: 'function_call', ...}`).",
    anyOf: [{ required: ["role"] }, { required: ["type"] }],
  });

const FlatToolDefinition = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
});

const FunctionToolDefinition = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1), description: z.string().optional() }),
});

export const ToolDefinition = z.union([FlatToolDefinition, FunctionToolDefinition]).meta({
  id: "ToolDefinition",
  description:
    "A tool offered to the model: flat `{name, ...}` or OpenAI's `{type: 'function', function: {name, ...}}`.",
});

export type ToolDefinition = z.infer<typeof ToolDefinition>;

/** The name a tool definition is known by, whichever API shaped it. */
export function toolDefinitionName(def: ToolDefinition): string {
  return "function" in def && typeof def.function === "object" && def.function !== null
    ? (def as z.infer<typeof FunctionToolDefinition>).function.name
    : (def as z.infer<typeof FlatToolDefinition>).name;
}

const ToolArguments = z.union([z.string(), z.record(z.string(), z.unknown())]);

const FlatToolCall = z.looseObject({
  id: z.string().optional(),
  name: z.string().min(1),
  arguments: ToolArguments.optional(),
});

const FunctionToolCall = z.looseObject({
  id: z.string().optional(),
  type: z.literal("function"),
  function: z.looseObject({ name: z.string().min(1), arguments: ToolArguments.optional() }),
});

export const ToolCall = z.union([FlatToolCall, FunctionToolCall]).meta({
  id: "ToolCall",
  description:
    "A tool call the model produced: flat `{id?, name, arguments}` (Anthropic `input` kept as is) or OpenAI's `{id, type: 'function', function: {name, arguments}}`. Calls without an id are accepted (some APIs omit it).",
});

export type ToolCall = z.infer<typeof ToolCall>;

/** The id of a tool call, or undefined when the API gave none (an empty id counts as none). */
export function toolCallId(call: { id?: string | undefined }): string | undefined {
  return typeof call.id === "string" && call.id.length > 0 ? call.id : undefined;
}

export function toolCallName(call: ToolCall): string {
  return "function" in call && typeof call.function === "object" && call.function !== null
    ? (call as z.infer<typeof FunctionToolCall>).function.name
    : (call as z.infer<typeof FlatToolCall>).name;
}

export const ToolParams = z
  .record(z.string(), z.unknown())
  .meta({ description: "The tool's arguments, parsed into an object." });

/** The key under which a tool input that is not an object is presented to policies. */
export const NON_OBJECT_INPUT_KEY = "input";

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A tool's input as the agent sends it: an object, or any other JSON value (a string for
 * free-text tools, an array, a number). Policies always see an object: a non-object input is
 * presented as `{ input: <value> }`, so handlers keep one shape (issue 13: before, a string input
 * was refused with `params: expected record, received string`). A policy that rewrites such a
 * call returns `{ input: <new value> }`; `toolInputFromParams` turns it back.
 */
export const ToolInput = z
  .union([ToolParams, z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown())])
  .transform((value): Record<string, unknown> =>
    isPlainRecord(value) ? value : { [NON_OBJECT_INPUT_KEY]: value },
  )
  .meta({
    description:
      "The tool's arguments: an object, or any other JSON value (policies see it as `{input: value}`).",
  });

/**
 * The tool input to run with, from the params a decision carries: the object itself, or for a
 * tool whose original input was not an object, the decision's `input` field.
 */
export function toolInputFromParams(original: unknown, params: Record<string, unknown>): unknown {
  return isPlainRecord(original) ? params : params[NON_OBJECT_INPUT_KEY];
}

export const ToolResultContent = z
  .union([z.string(), z.array(ContentPart)])
  .meta({ description: "What the model will see of a tool's result: text or content parts." });

/** Fields that every verdict able to stop the agent shares. */
export const blockFields = {
  block: z
    .boolean()
    .optional()
    .describe("true blocks. false is 'no opinion' and can never undo another policy's block."),
  blockReason: z
    .string()
    .optional()
    .describe("Why; kept only from the first (highest-priority) policy that blocks."),
};

export const Outcome = z.enum(["allow", "modify", "block", "reply", "pending_approval"]).meta({
  id: "Outcome",
  description:
    "What the merged decision tells the agent to do. pending_approval: wait for a person (docs/approvals.md); the agent SDK waits and returns the settled decision.",
});

export type Outcome = z.infer<typeof Outcome>;

/** Fields every merged decision carries, whatever its hook. */
export const decisionFields = {
  outcome: Outcome,
  blockReason: z.string().optional().describe("Present when outcome is block."),
  blockedBy: z.string().optional().describe("The policy whose block decided the outcome."),
  decidedBy: z
    .record(z.string(), z.array(z.string()))
    .describe(
      "For each field the decision sets (and `block`), the policies that decided it, in merge order.",
    ),
};
