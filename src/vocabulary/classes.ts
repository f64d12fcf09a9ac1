/**
 * Tool classes: what a tool does, whatever a framework calls it. OpenClaw's shell tool is `exec`,
 * Claude Code's is `Bash`, an MCP server's may be `run_command`; a policy that means "no shell
 * after untrusted input" should say `shell` once and hold under every adapter. The class is a
 * fact about the tool, not a verdict: a tool nothing knows is `unknown`, and the registry decides
 * what `unknown` gets (the shipped library holds it for approval). `other` is a class an operator
 * gives a tool on purpose: known, and none of the above.
 */
export const TOOL_CLASSES = [
  /** Runs commands or code: a shell, a process manager, a code interpreter. */
  "shell",
  /** Reads files or lists and searches the file system. */
  "file-read",
  /** Creates, changes, moves or deletes files. */
  "file-write",
  /** Fetches a URL chosen by the model. */
  "web-fetch",
  /** Queries a web search engine. */
  "web-search",
  /** Drives a browser or a desktop (navigates, clicks, types). */
  "browser",
  /** Sends something to a person or another system: email, chat, messages to other sessions. */
  "send-message",
  /** Hands the task to another agent or spawns one. */
  "sub-agent",
  /** Known to be none of the above: only an operator's own vocabulary says so (`deploy: "other"`). */
  "other",
  /** Nothing knows the tool: not its name, its words, its MCP server or its annotations. */
  "unknown",
] as const;

export type ToolClass = (typeof TOOL_CLASSES)[number];

const CLASS_SET: ReadonlySet<string> = new Set(TOOL_CLASSES);

export function isToolClass(value: unknown): value is ToolClass {
  return typeof value === "string" && CLASS_SET.has(value);
}
