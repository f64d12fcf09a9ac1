/**
 * Where a tool call keeps what it is about. Frameworks nest it: OpenAI's `local_shell` sends
 * `action: { type: "exec", command: ["rm", "-rf", "/"] }`, its `shell` tool
 * `action: { commands: [...] }`, MCP tools `arguments` (sometimes as a JSON string), others
 * `input.command` or `to: [{ email }]`. Reading top-level keys only let 13 of 14 attacks through
 * `local_shell`. This walks the whole value, iteratively (no recursion over a depth the caller
 * chooses), with a bound on depth and nodes; what the bound leaves unread is a fact (`unparsed`).
 *
 * A string is found by the key that holds it (`command`, `url`, `path`, `to`, …, matched without
 * case, `_` or `-`), by the key of the array it is in, and, for URLs, by its own form
 * (`scheme://…` under any key). A string that holds JSON (`"{\"command\": …}"`) is walked too,
 * when it is the whole params, sits under a key of its own role or a key that carries arguments
 * (`arguments`, `input`, …): a file's JSON content is not parsed on every write.
 */

/** Nesting deeper than this is not read. */
export const MAX_SHAPE_DEPTH = 32;
/** Values (objects, arrays, strings, numbers…) read at most per call. */
export const MAX_SHAPE_NODES = 10_000;
/** Findings kept per family at most. */
export const MAX_FINDINGS = 256;
/** A string longer than this is not parsed as JSON. */
export const MAX_JSON_STRING = 65_536;

/** A key is cut to this many characters in a finding's `at` (the path is for people to read). */
const MAX_KEY_IN_PATH = 64;

export type ShapeRole = "command" | "commands" | "url" | "path" | "recipient" | "cwd";
export type ShapeUnparsed = "depth" | "nodes" | "too-many";

export interface FoundCommand {
  /** The command as one shell text; an argv array quoted so that a shell reads the same words. */
  text: string;
  /** The argv, when it came as an array. */
  argv?: string[];
  /** Where it was: `action.command`, `commands[1]`. */
  at: string;
}

export interface ShapeFindings {
  commands: FoundCommand[];
  urls: string[];
  paths: string[];
  recipients: string[];
  /** The working directory the call names (`cwd`, `working_directory`). */
  cwd?: string;
  unparsed: ShapeUnparsed[];
}

const KEY_ROLES: ReadonlyMap<string, ShapeRole> = new Map([
  ...keys("command", ["command", "cmd", "script", "shellcommand", "bash", "exec", "code"]),
  ...keys("commands", ["commands", "cmds", "scripts"]),
  ...keys("url", ["url", "uri", "href", "link", "urls", "uris", "links", "endpoint", "webhook"]),
  ...keys("path", [
    "path",
    "paths",
    "file",
    "files",
    "filepath",
    "filepaths",
    "filename",
    "notebookpath",
    "source",
    "sources",
    "destination",
    "dest",
    "src",
    "dst",
    "targetfile",
    "directory",
    "dir",
    "folder",
    "oldpath",
    "newpath",
  ]),
  ...keys("recipient", [
    "to",
    "cc",
    "bcc",
    "recipient",
    "recipients",
    "replyto",
    "email",
    "emails",
    "channel",
    "target",
  ]),
  ...keys("cwd", ["cwd", "workingdirectory", "workdir"]),
]);

function keys(role: ShapeRole, names: readonly string[]): [string, ShapeRole][] {
  return names.map((name) => [name, role]);
}

/** `file_path`, `filePath`, `File-Path` → `filepath`. */
function keyOf(key: string): string {
  return key.toLowerCase().replace(/[_-]/g, "");
}

interface Node {
  value: unknown;
  role: ShapeRole | undefined;
  at: string;
  depth: number;
}

/** What `params` is about, wherever it keeps it. Pure; bounded by the limits above. */
export function findInShape(params: unknown): ShapeFindings {
  const found: ShapeFindings = { commands: [], urls: [], paths: [], recipients: [], unparsed: [] };
  const stack: Node[] = [{ value: params, role: undefined, at: "", depth: 0 }];
  let nodes = 0;
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (++nodes > MAX_SHAPE_NODES) return withUnparsed(found, "nodes");
    if (node.depth > MAX_SHAPE_DEPTH) {
      addUnparsed(found, "depth");
      continue;
    }
    visit(node, stack, found);
  }
  return found;
}

function visit(node: Node, stack: Node[], found: ShapeFindings): void {
  const { value, role, at, depth } = node;
  if (typeof value === "string") return foundString(value, role, at, depth, stack, found);
  if (Array.isArray(value)) {
    if (role === "command" && isArgv(value)) return addCommand(found, argvCommand(value, at));
    const itemRole = role === "commands" ? "command" : role;
    // Never more children on the stack than could be read: a million-item array costs nothing.
    const count = Math.min(value.length, MAX_SHAPE_NODES);
    if (count < value.length) addUnparsed(found, "nodes");
    for (let i = count - 1; i >= 0; i--)
      stack.push({ value: value[i], role: itemRole, at: `${at}[${i}]`, depth: depth + 1 });
    return;
  }
  if (typeof value !== "object" || value === null) return;
  const entries: [string, unknown][] = Object.entries(value as Record<string, unknown>);
  for (let i = entries.length - 1; i >= 0; i--) {
    const [key, child] = entries[i]!;
    const own = KEY_ROLES.get(keyOf(key));
    // Under a recipient list, `{ address }` and `{ name }` objects: only the address is one.
    const inherited = role === "recipient" && keyOf(key) === "address" ? role : undefined;
    const name = key.length > MAX_KEY_IN_PATH ? `${key.slice(0, MAX_KEY_IN_PATH)}…` : key;
    const path = at === "" ? name : `${at}.${name}`;
    stack.push({ value: child, role: own ?? inherited, at: path, depth: depth + 1 });
  }
}

function foundString(
  text: string,
  role: ShapeRole | undefined,
  at: string,
  depth: number,
  stack: Node[],
  found: ShapeFindings,
): void {
  const trimmed = text.trim();
  if (trimmed === "") return;
  if (
    (trimmed.startsWith("{") || trimmed.startsWith("[")) &&
    trimmed.length <= MAX_JSON_STRING &&
    (role !== undefined || carriesArguments(at))
  ) {
    const parsed = parseJson(trimmed);
    if (parsed !== undefined) {
      stack.push({ value: parsed, role, at: `${at}(json)`, depth: depth + 1 });
      return;
    }
  }
  if (role === "command" || role === "commands") return addCommand(found, { text, at });
  if (role === "path") return add(found, found.paths, text);
  if (role === "recipient") return add(found, found.recipients, text);
  if (role === "cwd") {
    found.cwd ??= text;
    return;
  }
  if (role === "url" || /^[a-z][a-z0-9+.-]{0,30}:\/\//i.test(trimmed)) add(found, found.urls, text);
}

/** Keys under which frameworks send a call's arguments as JSON text. */
const ARGUMENT_KEYS: ReadonlySet<string> = new Set([
  "arguments",
  "args",
  "input",
  "params",
  "parameters",
  "payload",
  "action",
]);

/** The whole params, or the value of an arguments key (`at` ends in its key). */
function carriesArguments(at: string): boolean {
  if (at === "") return true;
  const key = at.slice(at.lastIndexOf(".") + 1).replace(/\[\d+\]$/, "");
  return ARGUMENT_KEYS.has(keyOf(key));
}

function parseJson(text: string): unknown {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? value : undefined;
  } catch {
    return undefined;
  }
}

function isArgv(values: readonly unknown[]): values is string[] {
  return values.length > 0 && values.every((v) => typeof v === "string");
}

/** An argv array as shell text: words with anything but safe characters are single-quoted. */
function argvCommand(argv: string[], at: string): FoundCommand {
  const text = argv.map(shellWord).join(" ");
  return { text, argv: [...argv], at };
}

function shellWord(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(word)) return word;
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

function addCommand(found: ShapeFindings, command: FoundCommand): void {
  if (found.commands.length >= MAX_FINDINGS) return addUnparsed(found, "too-many");
  found.commands.push(command);
}

function add(found: ShapeFindings, list: string[], text: string): void {
  if (list.length >= MAX_FINDINGS) return addUnparsed(found, "too-many");
  if (!list.includes(text)) list.push(text);
}

function addUnparsed(found: ShapeFindings, reason: ShapeUnparsed): void {
  if (!found.unparsed.includes(reason)) found.unparsed.push(reason);
}

function withUnparsed(found: ShapeFindings, reason: ShapeUnparsed): ShapeFindings {
  addUnparsed(found, reason);
  return found;
}
