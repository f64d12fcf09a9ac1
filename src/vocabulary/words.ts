/**
 * A class from the words of a name no table knows: `start_process` runs processes, `download`
 * fetches, `send_invoice` sends. An MCP server's tools are named by people who never read our
 * tables (`mcp__desktop-commander__start_process`, `mcp__shell__run`), and a tool left without a
 * class escapes every rule written by class. Words are tried on the tool's own name first, then
 * on its MCP server's name (`shell`, `browser`, `gmail`). A name whose words say nothing stays
 * `unknown`, which the shipped library holds for approval (docs/vocabulary.md).
 *
 * Only words that say what a tool does are listed, most powerful class first: a name with words
 * of two classes (`send_file`) gets the one more rules watch.
 */
import type { ToolClass } from "./classes.js";

/** A name longer than this is not split into words (no tool name is; a hostile one costs nothing). */
const MAX_NAME_CHARS = 256;

interface WordRule {
  toolClass: ToolClass;
  /** Any one of these words gives the class. */
  any: ReadonlySet<string>;
  /** Or one of `with` together with one of `and`. */
  with?: ReadonlySet<string>;
  and?: ReadonlySet<string>;
}

const FILE_NOUNS = new Set(["file", "files", "dir", "dirs", "directory", "directories", "folder"]);

const RULES: readonly WordRule[] = [
  {
    toolClass: "shell",
    any: new Set([
      "exec",
      "execute",
      "shell",
      "bash",
      "sh",
      "zsh",
      "powershell",
      "pwsh",
      "cmd",
      "command",
      "commands",
      "terminal",
      "process",
      "processes",
      "subprocess",
      "interpreter",
      "repl",
      "eval",
      "ssh",
    ]),
  },
  {
    toolClass: "send-message",
    any: new Set(["send", "email", "mail", "gmail", "sms", "slack", "tweet", "notify", "dm"]),
    with: new Set(["post", "reply", "publish", "forward"]),
    and: new Set(["message", "messages", "comment", "chat", "channel", "email", "mail"]),
  },
  {
    toolClass: "web-fetch",
    any: new Set(["fetch", "download", "http", "https", "curl", "wget", "scrape", "crawl", "url"]),
  },
  {
    toolClass: "browser",
    any: new Set([
      "browser",
      "navigate",
      "click",
      "screenshot",
      "playwright",
      "puppeteer",
      "selenium",
    ]),
  },
  {
    toolClass: "web-search",
    any: new Set(["google", "bing", "duckduckgo", "tavily", "serp", "serpapi", "brave"]),
    with: new Set(["search", "query"]),
    and: new Set(["web", "internet", "online"]),
  },
  {
    toolClass: "file-write",
    any: new Set(["mkdir", "rmdir", "chmod", "chown"]),
    with: new Set([
      "write",
      "edit",
      "create",
      "delete",
      "remove",
      "rm",
      "move",
      "rename",
      "update",
      "patch",
      "append",
      "save",
      "copy",
    ]),
    and: FILE_NOUNS,
  },
  {
    toolClass: "file-read",
    any: new Set(["grep", "glob"]),
    with: new Set(["read", "get", "list", "view", "cat", "open", "search", "find", "stat", "tree"]),
    and: FILE_NOUNS,
  },
  {
    toolClass: "sub-agent",
    any: new Set(["subagent", "delegate", "handoff"]),
    with: new Set(["spawn", "start", "create", "call", "ask", "run"]),
    and: new Set(["agent", "agents"]),
  },
];

/** The words of a name: split at `_`, `-`, `.`, `/`, spaces, digits and lower-to-upper case. */
export function nameWords(name: string): string[] {
  if (name.length > MAX_NAME_CHARS) return [];
  return name
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((word) => word !== "");
}

/** The class the words of `names` (tried in order) say, or undefined when none does. */
export function classOfWords(...names: readonly string[]): ToolClass | undefined {
  for (const name of names) {
    const words = new Set(nameWords(name));
    if (words.size === 0) continue;
    for (const rule of RULES) if (ruleMatches(rule, words)) return rule.toolClass;
  }
  return undefined;
}

function ruleMatches(rule: WordRule, words: ReadonlySet<string>): boolean {
  for (const word of words) if (rule.any.has(word)) return true;
  if (rule.with === undefined || rule.and === undefined) return false;
  let verb = false;
  let noun = false;
  for (const word of words) {
    verb ||= rule.with.has(word);
    noun ||= rule.and.has(word);
  }
  return verb && noun;
}
