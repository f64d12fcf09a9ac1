/**
 * The names each framework gives its tools, by class. One table per source so a reviewer can
 * check it against that framework's documentation; a name listed twice must agree on its class
 * (a unit test checks). Names are matched exactly first, then case-insensitively, so `read`
 * (OpenClaw) and `Read` (Claude Code) need one entry each only where they differ in more than case.
 */
import type { ToolClass } from "./classes.js";

type NameTable = Readonly<Partial<Record<ToolClass, readonly string[]>>>;

/** OpenClaw's built-in tools (docs.openclaw.ai/tools, groups runtime, fs, web, ui, messaging, sessions). */
const OPENCLAW: NameTable = {
  shell: ["exec", "bash", "process"],
  "file-read": ["read", "ls", "find", "grep", "memory_search", "memory_get"],
  "file-write": ["write", "edit", "apply_patch"],
  "web-fetch": ["web_fetch"],
  "web-search": ["web_search"],
  browser: ["browser", "canvas"],
  "send-message": ["message", "sessions_send"],
  "sub-agent": ["sessions_spawn"],
};

/** Claude Code's tools (its hooks see these as `tool_name`). */
const CLAUDE_CODE: NameTable = {
  shell: ["Bash", "BashOutput", "KillShell", "KillBash"],
  "file-read": ["Read", "Glob", "Grep", "LS", "NotebookRead"],
  "file-write": ["Write", "Edit", "MultiEdit", "NotebookEdit"],
  "web-fetch": ["WebFetch"],
  "web-search": ["WebSearch"],
  "sub-agent": ["Task", "Agent"],
};

/**
 * Provider-defined tools of the Vercel AI SDK and the OpenAI Agents SDK (hosted and local tools),
 * and the names their examples and most apps give function tools.
 */
const SDK_TOOLS: NameTable = {
  shell: [
    "shell",
    "local_shell",
    "code_interpreter",
    "run_command",
    "execute_command",
    "run_shell_command",
    "terminal",
  ],
  "file-read": ["read_file", "list_files", "file_search", "view", "cat"],
  "file-write": [
    "write_file",
    "edit_file",
    "delete_file",
    "str_replace_editor",
    "str_replace_based_edit_tool",
    "text_editor",
  ],
  "web-fetch": ["fetch", "fetch_url", "http_request", "http_get", "get_url", "browse_url"],
  "web-search": ["search_web", "web_search_preview", "google_search", "bing_search"],
  browser: ["computer", "computer_use", "computer_use_preview"],
  "send-message": [
    "send_email",
    "send_message",
    "email",
    "send_sms",
    "post_message",
    "slack_post_message",
    "send_slack_message",
    "notify",
  ],
};

/** The reference MCP servers' tools (filesystem, fetch, git, memory, puppeteer/playwright, slack). */
const MCP_REFERENCE: NameTable = {
  "file-read": [
    "read_text_file",
    "read_media_file",
    "read_multiple_files",
    "list_directory",
    "list_directory_with_sizes",
    "directory_tree",
    "search_files",
    "get_file_info",
    "list_allowed_directories",
  ],
  "file-write": ["create_directory", "move_file", "git_commit", "git_add", "git_reset"],
  browser: [
    "browser_navigate",
    "browser_click",
    "browser_type",
    "puppeteer_navigate",
    "puppeteer_click",
    "puppeteer_fill",
    "puppeteer_evaluate",
  ],
};

const SOURCES: readonly NameTable[] = [OPENCLAW, CLAUDE_CODE, SDK_TOOLS, MCP_REFERENCE];

/** Every known name with its class, as one list (the unit test checks it has no conflicts). */
export const KNOWN_TOOL_NAMES: readonly (readonly [name: string, toolClass: ToolClass])[] =
  SOURCES.flatMap((table) =>
    (Object.entries(table) as [ToolClass, readonly string[]][]).flatMap(([toolClass, names]) =>
      names.map((name) => [name, toolClass] as const),
    ),
  );

/**
 * Name prefixes that say the class: the OpenAI Agents SDK names a handoff `transfer_to_<agent>`,
 * browser MCP servers prefix their tools `browser_`.
 */
export const KNOWN_TOOL_PREFIXES: readonly (readonly [prefix: string, toolClass: ToolClass])[] = [
  ["transfer_to_", "sub-agent"],
  ["browser_", "browser"],
  ["puppeteer_", "browser"],
  ["playwright_", "browser"],
];
