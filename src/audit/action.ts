/**
 * What a record's call was about, in one line for a table row: the tool, and the action's gist
 * (the command, the URL, the path, the recipients), read from the recorded event. An operator's
 * first question is "what was just blocked?", and a call id answers none of it.
 */
import type { LogRecord } from "../log/record.js";

export interface RecordAction {
  /** The tool (or tools, for after_llm_call) the call was about. */
  tool?: string;
  /** The action in a few words: `rm -rf /`, `https://pastebin.com/…`, `to a@b.com`. */
  gist?: string;
}

/** The longest gist shown; the decision page has the whole event. */
const GIST_CHARS = 120;

/** Parameter names that carry an action's gist, in the order they are tried. */
const GIST_KEYS: [key: string, prefix: string][] = [
  ["command", ""],
  ["cmd", ""],
  ["commands", ""],
  ["script", ""],
  ["code", ""],
  ["url", ""],
  ["uri", ""],
  ["file_path", ""],
  ["path", ""],
  ["to", "to "],
  ["recipients", "to "],
  ["query", "query "],
];

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (Array.isArray(value) && value.every((v) => typeof v === "string" || typeof v === "number"))
    return value.join(" ");
  return undefined;
}

function clip(value: string): string {
  const line = value.replace(/\s+/g, " ").trim();
  return line.length > GIST_CHARS ? `${line.slice(0, GIST_CHARS - 1)}…` : line;
}

/** The gist of a tool's params: the first known key, also one level down (`action.command`). */
export function paramsGist(params: unknown): string | undefined {
  if (!isObject(params)) return text(params) === undefined ? undefined : clip(text(params)!);
  for (const scope of [params, ...Object.values(params).filter(isObject)]) {
    for (const [key, prefix] of GIST_KEYS) {
      const value = text(scope[key]);
      if (value !== undefined && value !== "") return clip(prefix + value);
    }
  }
  return undefined;
}

function toolCallNames(event: Record<string, unknown>): string | undefined {
  const calls = event.toolCalls;
  if (!Array.isArray(calls)) return undefined;
  const names = calls.map((c) => (isObject(c) && typeof c.name === "string" ? c.name : "?"));
  return names.length === 0 ? undefined : names.join(", ");
}

function eventOf(record: LogRecord): Record<string, unknown> | undefined {
  const event = "event" in record ? record.event : undefined;
  return isObject(event) ? event : undefined;
}

/** The run a record's call belonged to, when its context names one. */
export function recordRunId(record: LogRecord): string | undefined {
  const context = "context" in record ? record.context : undefined;
  return isObject(context) && typeof context.runId === "string" ? context.runId : undefined;
}

/** The tool and the gist of a record's call, as far as its event says. */
export function recordAction(record: LogRecord): RecordAction {
  const event = eventOf(record);
  if (event === undefined) return {};
  const action: RecordAction = {};
  if (typeof event.toolName === "string") action.tool = event.toolName;
  else if (toolCallNames(event) !== undefined) action.tool = toolCallNames(event);
  const gist =
    paramsGist(event.params) ??
    (typeof event.model === "string" ? `model ${event.model}` : undefined) ??
    text(event.content) ??
    text(event.cleanedBody);
  if (gist !== undefined && gist !== "") action.gist = clip(gist);
  return action;
}
