// The fast Claude Code hook's closed answers, for when it gets no answer from its daemon: the same
// shapes as answerFailure in src/adapters/claude-code/mapping.ts (a unit test compares them for
// every event). Kept here, in plain JavaScript with no imports, so the per-event client never
// loads hookbus itself.

const EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "SessionEnd",
];

/** The event a payload names, or undefined when it names none we answer. */
export function eventNameOf(raw) {
  const name = typeof raw === "object" && raw !== null ? raw.hook_event_name : undefined;
  return EVENTS.find((event) => event === name);
}

/** No error class names for the model to read (as readerText in mapping.ts). */
function readerText(text) {
  return text.replace(/\b(?:[A-Z][A-Za-z]*)?Error: /g, "");
}

/** Gates fail closed, observations warn: answerFailure's table. */
export function failureAnswer(name, toolName, code, message) {
  const why = `hookbus could not decide (${code}): ${readerText(message)}`;
  switch (name) {
    case "PreToolUse":
      return {
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: `${why}; the tool call is refused (fail closed)`,
        },
      };
    case "PostToolUse":
      if (typeof toolName === "string" && toolName.startsWith("mcp__"))
        return {
          decision: "block",
          reason: `${why}; the tool output is withheld (fail closed)`,
          hookSpecificOutput: {
            hookEventName: "PostToolUse",
            updatedMCPToolOutput: `[tool output withheld] ${why}`,
          },
        };
      return { systemMessage: `${why}; this tool call was not recorded` };
    case "UserPromptSubmit":
      return { decision: "block", reason: `${why}; the prompt is refused (fail closed)` };
    case "Stop":
      return { continue: false, stopReason: `${why}; stopping (fail closed)`, systemMessage: why };
    default:
      return { systemMessage: `${why}; this event was not recorded` };
  }
}
