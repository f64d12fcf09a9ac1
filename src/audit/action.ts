/**
 * What a record's call was about, in one line for a table row: the tool, and the action's gist
 * (the command, the URL, the path, the recipients), read from the recorded event. An operator's
 * first question is "what was just blocked?", and a call id answers none of it.
 */
import { findInShape } from "../facts/shape.js";
import type { LogRecord } from "../log/record.js";

export interface RecordAction {
  /** The tool (or tools, for after_llm_call) the call was about. */
  tool?: string;
  /** The action in a few words: `rm -rf /`, `https://pastebin.com/…`, `to a@b.com`. */
  gist?: string;
}

/** The longest gist shown; the decision page has the whole event. */
const GIST_CHARS = 120;

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

/**
 * The gist of a tool's params: its command, else its URL, its path, its recipients, found where
 * the facts find them (src/facts/shape.ts: any depth, JSON text, `action.command` as an argv),
 * so a row shows what the policies were shown. Bare text params are their own gist.
 */
export function paramsGist(params: unknown): string | undefined {
  if (!isObject(params)) {
    const bare = text(params);
    return bare === undefined || bare === "" ? undefined : clip(bare);
  }
  const found = findInShape(params);
  const gist =
    found.commands.map((c) => c.text).join("; ") ||
    found.urls[0] ||
    found.paths[0] ||
    (found.recipients.length > 0 ? `to ${found.recipients.join(" ")}` : "");
  return gist === "" ? undefined : clip(gist);
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
