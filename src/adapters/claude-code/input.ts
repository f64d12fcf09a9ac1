/**
 * What Claude Code writes on a command hook's stdin: one JSON object, with fields common to every
 * event (`session_id`, `transcript_path`, `cwd`, `permission_mode`, `hook_event_name`) and fields
 * of its event. Objects are loose: Claude Code adds fields between releases, and a hook that
 * rejected them would fail every call after an upgrade.
 */
import { z } from "zod";
import { HookbusError } from "../../foundation/errors.js";

/** Stdin larger than this is refused (fail closed): tool responses are the large part. */
export const MAX_HOOK_INPUT_BYTES = 16 * 1024 * 1024;

const common = {
  session_id: z.string().min(1),
  transcript_path: z.string().optional(),
  cwd: z.string().optional(),
  permission_mode: z.string().optional(),
};

const toolInput = z.record(z.string(), z.unknown());

export const PreToolUseInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("PreToolUse"),
  tool_name: z.string().min(1),
  tool_input: toolInput,
  tool_use_id: z.string().optional(),
});

export const PostToolUseInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("PostToolUse"),
  tool_name: z.string().min(1),
  tool_input: toolInput,
  tool_response: z.unknown().optional(),
  tool_use_id: z.string().optional(),
});

export const PostToolUseFailureInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("PostToolUseFailure"),
  tool_name: z.string().min(1),
  tool_input: toolInput,
  tool_use_id: z.string().optional(),
  error: z.unknown().optional(),
});

export const UserPromptSubmitInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("UserPromptSubmit"),
  prompt: z.string(),
});

export const StopInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("Stop"),
  stop_hook_active: z.boolean().optional(),
  last_assistant_message: z.string().optional(),
});

export const SessionStartInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("SessionStart"),
  source: z.string().optional(),
});

export const SessionEndInput = z.looseObject({
  ...common,
  hook_event_name: z.literal("SessionEnd"),
  reason: z.string().optional(),
});

export const ClaudeCodeHookInput = z.discriminatedUnion("hook_event_name", [
  PreToolUseInput,
  PostToolUseInput,
  PostToolUseFailureInput,
  UserPromptSubmitInput,
  StopInput,
  SessionStartInput,
  SessionEndInput,
]);

export type ClaudeCodeHookInput = z.infer<typeof ClaudeCodeHookInput>;
export type ClaudeCodeEventName = ClaudeCodeHookInput["hook_event_name"];
export const CLAUDE_CODE_EVENTS: readonly ClaudeCodeEventName[] = ClaudeCodeHookInput.options.map(
  (o) => o.shape.hook_event_name.value,
);

/** The event name of a payload that may not parse, so a failure can still answer in its terms. */
export function eventNameOf(raw: unknown): ClaudeCodeEventName | undefined {
  const name =
    typeof raw === "object" && raw !== null
      ? (raw as { hook_event_name?: unknown }).hook_event_name
      : undefined;
  return CLAUDE_CODE_EVENTS.find((event) => event === name);
}

/** Parse stdin's text; a bad payload is a coded error (the caller answers it closed). */
export function parseHookInput(text: string): ClaudeCodeHookInput {
  if (Buffer.byteLength(text) > MAX_HOOK_INPUT_BYTES)
    throw new HookbusError(
      "HOOKBUS_LIMIT_EXCEEDED",
      `the hook input is larger than ${MAX_HOOK_INPUT_BYTES} bytes`,
      { limit: "claudeCodeHookInputBytes" },
    );
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new HookbusError(
      "HOOKBUS_BAD_MESSAGE",
      `the hook input is not JSON (${(error as Error).message}): run this command as a Claude Code command hook, which writes one JSON object on stdin`,
    );
  }
  const parsed = ClaudeCodeHookInput.safeParse(raw);
  if (!parsed.success) {
    const name = eventNameOf(raw);
    throw new HookbusError(
      "HOOKBUS_INVALID_EVENT",
      name === undefined
        ? `unsupported hook_event_name ${JSON.stringify((raw as { hook_event_name?: unknown } | null)?.hook_event_name)}: configure this command for ${CLAUDE_CODE_EVENTS.join(", ")}`
        : `the ${name} input does not match Claude Code's documented format`,
      {
        issues: parsed.error.issues.map((issue) => ({
          path: issue.path.join("."),
          rule: issue.code,
          message: issue.message,
        })),
      },
    );
  }
  return parsed.data;
}
