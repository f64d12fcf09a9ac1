/**
 * Field-level comparison of a recorded decision with its replay, and the one-line summary a
 * reviewer reads ("before_tool_call exec: allow → block by `no-shell`"). Two decisions are the
 * same when they tell the agent the same thing and name the same blocker: `decidedBy` is
 * bookkeeping and is not compared.
 */
import { isDeepStrictEqual } from "node:util";
import {
  toolCallId,
  toolCallName,
  toolDefinitionName,
  type ToolCall,
  type ToolDefinition,
} from "../catalog/common.js";
import type { ModifyingHookName } from "../catalog/catalog.js";
import type { FieldChange } from "./types.js";

type Fields = Record<string, unknown>;

export interface DecisionDiff {
  diff: FieldChange[];
  /** Absent when nothing changed. */
  change?: string;
  /** The record's one line, whether or not it changed. */
  summary: string;
}

/** Fields in the order a reader wants them: what happened first, then what was rewritten. */
const FIELD_ORDER = [
  "outcome",
  "blockedBy",
  "blockReason",
  "reply",
  "reason",
  "messages",
  "systemPrompt",
  "tools",
  "toolCalls",
  "params",
  "content",
  "allContent",
  "requireApproval",
];
/**
 * `approval` is the id a coordinator gives a pending request (not something policies decide), and
 * `resolvedApproval` what a person answered: replay compares what the policies asked for (a
 * changed `requireApproval` is a change) and never asks a person.
 */
const IGNORED = new Set(["decidedBy", "approval", "resolvedApproval"]);

function fieldRank(field: string): number {
  const rank = FIELD_ORDER.indexOf(field);
  return rank === -1 ? FIELD_ORDER.length : rank;
}

/** What the call was about, for the summary line: the tool, or the tool calls. */
export function subjectOf(hook: ModifyingHookName, event: Fields): string {
  switch (hook) {
    case "before_tool_call":
    case "before_tool_result":
      return typeof event.toolName === "string" ? event.toolName : "";
    case "after_llm_call": {
      const calls = Array.isArray(event.toolCalls) ? (event.toolCalls as ToolCall[]) : [];
      return calls.length === 0 ? "(no tool calls)" : `[${calls.map(safeCallName).join(", ")}]`;
    }
    default:
      return "";
  }
}

function safeCallName(call: ToolCall): string {
  try {
    return toolCallName(call);
  } catch {
    return "?";
  }
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "-";
}

function describeOutcome(decision: Fields): string {
  const outcome = String(decision.outcome);
  return outcome === "block" && typeof decision.blockedBy === "string"
    ? `block by \`${decision.blockedBy}\``
    : outcome;
}

function toolNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return (value as ToolDefinition[]).map((def) => {
    try {
      return toolDefinitionName(def);
    } catch {
      return "?";
    }
  });
}

function callLabels(value: unknown): Map<string, string> {
  const labels = new Map<string, string>();
  if (!Array.isArray(value)) return labels;
  for (const call of value as ToolCall[]) {
    const id = toolCallId(call) ?? "(no id)";
    labels.set(id, `${id} (${safeCallName(call)})`);
  }
  return labels;
}

/** "a, b removed; c restored" for two sets of names, where `all` is what an absent list means. */
function listChange(
  before: string[],
  after: string[],
  label: (name: string) => string = (name) => name,
): string {
  const removed = before.filter((name) => !after.includes(name)).map(label);
  const restored = after.filter((name) => !before.includes(name)).map(label);
  const parts = [
    ...(removed.length > 0 ? [`${removed.join(", ")} removed`] : []),
    ...(restored.length > 0 ? [`${restored.join(", ")} restored`] : []),
  ];
  return parts.length > 0 ? parts.join("; ") : "same entries, set explicitly";
}

const REWRITE_VERB: Record<string, [set: string, unset: string, other: string]> = {
  content: ["redacted", "no longer redacted", "redacted differently"],
  allContent: ["redacted", "no longer redacted", "redacted differently"],
  params: ["rewritten", "no longer rewritten", "rewritten differently"],
  messages: ["rewritten", "no longer rewritten", "rewritten differently"],
  systemPrompt: ["rewritten", "no longer rewritten", "rewritten differently"],
  reply: ["added", "removed", "changed"],
  reason: ["added", "removed", "changed"],
};

function summarizeField(field: string, before: Fields, after: Fields, event: Fields): string {
  const had = Object.hasOwn(before, field);
  const has = Object.hasOwn(after, field);
  switch (field) {
    case "outcome":
      return `${describeOutcome(before)} → ${describeOutcome(after)}`;
    case "blockedBy":
      return `blocked by \`${text(before.blockedBy)}\` → \`${text(after.blockedBy)}\``;
    case "blockReason":
      return had && has
        ? `block reason ${JSON.stringify(before.blockReason)} → ${JSON.stringify(after.blockReason)}`
        : has
          ? `block reason ${JSON.stringify(after.blockReason)}`
          : "no block reason";
    case "tools": {
      const offered = toolNames(event.tools);
      const b = had ? toolNames(before.tools) : offered;
      const a = has ? toolNames(after.tools) : offered;
      return `tools: ${listChange(b, a)}`;
    }
    case "toolCalls": {
      const offered = callLabels(event.toolCalls);
      const b = had ? callLabels(before.toolCalls) : offered;
      const a = has ? callLabels(after.toolCalls) : offered;
      const label = (id: string) => offered.get(id) ?? b.get(id) ?? a.get(id) ?? id;
      return `toolCalls: ${listChange([...b.keys()], [...a.keys()], label)}`;
    }
    default: {
      const verbs = REWRITE_VERB[field] ?? ["set", "unset", "changed"];
      return `${field} ${had ? (has ? verbs[2] : verbs[1]) : verbs[0]}`;
    }
  }
}

/** A compared field differs; `===` first: most fields of an unchanged record are the same string. */
function fieldDiffers(recorded: Fields, replayed: Fields, field: string): boolean {
  const before = recorded[field];
  const after = replayed[field];
  return before !== after && !isDeepStrictEqual(before, after);
}

/**
 * The compared fields that differ, each once. Written as loops, not a Set of both key lists: it runs
 * for every replayed record, and most records differ in nothing.
 */
function differingFields(recorded: Fields, replayed: Fields, skip: ReadonlySet<string>): string[] {
  const fields: string[] = [];
  const compared = (field: string) => !IGNORED.has(field) && !skip.has(field);
  for (const field in recorded) {
    if (
      Object.hasOwn(recorded, field) &&
      compared(field) &&
      fieldDiffers(recorded, replayed, field)
    )
      fields.push(field);
  }
  for (const field in replayed) {
    if (
      Object.hasOwn(replayed, field) &&
      !Object.hasOwn(recorded, field) &&
      compared(field) &&
      fieldDiffers(recorded, replayed, field)
    )
      fields.push(field);
  }
  return fields;
}

const NOTHING_SKIPPED: ReadonlySet<string> = new Set();

/**
 * Compare two decisions of `hook`. `skip` names fields whose recorded value cannot be trusted
 * (masked by redaction before the record was written): they are left out of the comparison.
 */
export function diffDecisions(
  hook: ModifyingHookName,
  event: Fields,
  recorded: Fields,
  replayed: Fields,
  skip: ReadonlySet<string> = NOTHING_SKIPPED,
): DecisionDiff {
  const fields = differingFields(recorded, replayed, skip);
  if (fields.length > 1) {
    fields.sort((a, b) => fieldRank(a) - fieldRank(b) || (a < b ? -1 : a > b ? 1 : 0));
  }

  const diff: FieldChange[] = fields.map((field) => ({
    field,
    ...(Object.hasOwn(recorded, field) ? { before: recorded[field] } : {}),
    ...(Object.hasOwn(replayed, field) ? { after: replayed[field] } : {}),
    summary: summarizeField(field, recorded, replayed, event),
  }));

  const subject = subjectOf(hook, event);
  const head = subject === "" ? hook : `${hook} ${subject}`;
  if (diff.length === 0) return { diff, summary: `${head}: ${describeOutcome(replayed)}` };

  const before = String(recorded.outcome);
  const after = String(replayed.outcome);
  const rewrites = diff.filter((d) => !["outcome", "blockedBy", "blockReason"].includes(d.field));
  let line: string;
  let change: string;
  if (before !== after) {
    change = `${before}→${after}`;
    const transition = summarizeField("outcome", recorded, replayed, event);
    if (before !== "block" && after !== "block" && rewrites.length > 0) {
      // allow → modify and the like: what was rewritten says it all ("content redacted").
      line = rewrites.map((d) => d.summary).join(", ");
    } else {
      const detail = after === "block" ? [] : rewrites.map((d) => d.summary);
      line = `${transition}${detail.length > 0 ? ` (${detail.join(", ")})` : ""}`;
    }
  } else if (after === "block") {
    change = "block: " + diff.map((d) => d.field).join(",");
    line = diff.map((d) => d.summary).join(", ");
  } else {
    change = `${after}: ${diff.map((d) => d.field).join(",")}`;
    line = diff.map((d) => d.summary).join(", ");
  }
  return { diff, change, summary: `${head}: ${line}` };
}
