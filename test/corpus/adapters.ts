/**
 * Each adapter's tool vocabulary: how one corpus action (a shell command, a file read or write, a
 * fetch, an email, a named MCP tool) is spelt as the tool name and parameters that framework
 * really sends. The shell spellings follow the frameworks' own tools: Claude Code `Bash`, MCP
 * shell servers, OpenAI Agents `shell` (a list of commands) and `local_shell` (an argv array),
 * the AI SDK's and pi's `bash`, OpenClaw's `exec`.
 */
import type { CorpusAction } from "./corpus.js";

export interface ToolCall {
  toolName: string;
  params: Record<string, unknown>;
}

export interface AdapterVocabulary {
  adapter: string;
  shell(command: string): ToolCall;
  read(path: string): ToolCall;
  write(path: string, content: string): ToolCall;
  fetch(url: string): ToolCall;
  email(to: string[], subject: string, body: string): ToolCall;
  /** An MCP server's tool: `mcp__server__tool` where the framework prefixes, else the bare name. */
  mcp(server: string, tool: string, params: Record<string, unknown>): ToolCall;
}

const call = (toolName: string, params: Record<string, unknown>): ToolCall => ({
  toolName,
  params,
});
const prefixed = (server: string, tool: string, params: Record<string, unknown>) =>
  call(`mcp__${server}__${tool}`, params);
const bare = (_server: string, tool: string, params: Record<string, unknown>) => call(tool, params);
const gmail = (to: string[], subject: string, body: string) =>
  call("mcp__gmail__send_email", { to, subject, body });

/** A command of plain words goes as its words; anything else as `bash -lc`, as Codex sends it. */
const PLAIN_WORDS = /^[A-Za-z0-9_./:=@%+,-]+( [A-Za-z0-9_./:=@%+,-]+)*$/;
export function argvOf(command: string): string[] {
  return PLAIN_WORDS.test(command) ? command.split(" ") : ["bash", "-lc", command];
}

const openAiTools = {
  read: (path: string) => call("read_file", { path }),
  write: (path: string, content: string) => call("write_file", { path, content }),
  fetch: (url: string) => call("http_request", { method: "GET", url }),
  email: (to: string[], subject: string, body: string) =>
    call("send_email", { to: to.join(","), subject, body }),
  mcp: bare,
};

export const ADAPTERS: readonly AdapterVocabulary[] = [
  {
    adapter: "claude-code",
    shell: (command) => call("Bash", { command, description: "run it" }),
    read: (file_path) => call("Read", { file_path }),
    write: (file_path, content) => call("Write", { file_path, content }),
    fetch: (url) => call("WebFetch", { url, prompt: "summarise the page" }),
    email: gmail,
    mcp: prefixed,
  },
  {
    adapter: "mcp-shell-run",
    shell: (command) => call("mcp__shell__run", { command }),
    read: (path) => call("mcp__filesystem__read_text_file", { path }),
    write: (path, content) => call("mcp__filesystem__write_file", { path, content }),
    fetch: (url) => call("mcp__fetch__fetch", { url, max_length: 5000 }),
    email: gmail,
    mcp: prefixed,
  },
  {
    adapter: "mcp-desktop-commander",
    shell: (command) =>
      call("mcp__desktop-commander__start_process", { command, timeout_ms: 30_000 }),
    read: (path) => call("mcp__desktop-commander__read_file", { path }),
    write: (path, content) =>
      call("mcp__desktop-commander__write_file", { path, content, mode: "rewrite" }),
    fetch: (url) => call("mcp__fetch__fetch", { url }),
    email: gmail,
    mcp: prefixed,
  },
  {
    adapter: "openai-agents-shell",
    shell: (command) => call("shell", { commands: [command], timeout_ms: 60_000 }),
    ...openAiTools,
  },
  {
    adapter: "openai-agents-local_shell",
    shell: (command) =>
      call("local_shell", { action: { type: "exec", command: argvOf(command), env: {} } }),
    ...openAiTools,
  },
  {
    adapter: "ai-sdk",
    shell: (command) => call("bash", { command }),
    read: (path) => call("read_file", { path }),
    write: (path, content) => call("write_file", { path, content }),
    fetch: (url) => call("fetch_url", { url }),
    email: (to, subject, body) => call("send_email", { to, subject, body }),
    mcp: bare,
  },
  {
    adapter: "pi",
    shell: (command) => call("bash", { command, timeout: 120 }),
    read: (path) => call("read", { path }),
    write: (path, content) => call("write", { path, content }),
    fetch: (url) => call("fetch", { url }),
    email: (to, subject, body) => call("send_email", { to, subject, body }),
    mcp: bare,
  },
  {
    adapter: "openclaw",
    shell: (command) => call("exec", { command }),
    read: (path) => call("read", { path }),
    write: (path, content) => call("write", { path, content }),
    fetch: (url) => call("web_fetch", { url, extractMode: "markdown" }),
    email: (to, _subject, body) =>
      call("message", { action: "send", channel: "email", target: to.join(","), message: body }),
    mcp: bare,
  },
];

/** The tool call `adapter` makes for `action`. */
export function toolCallFor(adapter: AdapterVocabulary, action: CorpusAction): ToolCall {
  switch (action.kind) {
    case "shell":
      return adapter.shell(action.command);
    case "read":
      return adapter.read(action.path);
    case "write":
      return adapter.write(action.path, action.content);
    case "fetch":
      return adapter.fetch(action.url);
    case "email":
      return adapter.email(action.to, action.subject, action.body);
    case "mcp":
      return adapter.mcp(action.server, action.tool, action.params);
  }
}
