/**
 * How `hookbus audit` prints for people: a table of records (streamed, so a large result is not
 * held in memory) and a session timeline. Every value from the log is escaped before it is
 * printed: an agent id or a reason with a newline or a terminal escape cannot forge a row.
 */
import type { AuditEntry } from "./query.js";
import {
  recordLatencyMs,
  summarizeDecision,
  summarizeRecord,
  type TimelineEntry,
} from "./timeline.js";

/** Control characters (and line separators) as JSON escapes: what is printed is one line. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) =>
    JSON.stringify(c).slice(1, -1),
  );
}

export function truncate(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}

function cell(text: string, max = 200): string {
  return truncate(printable(text), max);
}

export function formatMs(ms: number | undefined): string {
  if (ms === undefined) return "-";
  return `${Math.round(ms * 10) / 10} ms`;
}

export interface Column {
  title: string;
  /** Width used before any row is seen (and the least width). */
  minWidth: number;
  /** Cells are truncated to this many characters. */
  maxWidth: number;
  align?: "left" | "right";
}

export const QUERY_COLUMNS: readonly Column[] = [
  { title: "time", minWidth: 24, maxWidth: 24 },
  { title: "agent", minWidth: 8, maxWidth: 32 },
  { title: "session", minWidth: 8, maxWidth: 32 },
  { title: "hook", minWidth: 16, maxWidth: 24 },
  { title: "outcome", minWidth: 8, maxWidth: 8 },
  { title: "decided by / reason", minWidth: 24, maxWidth: 96 },
  { title: "latency", minWidth: 9, maxWidth: 12, align: "right" },
];

/** The table row of one record: time, agent, session, hook, outcome, decided by / reason, latency. */
export function queryRow(entry: AuditEntry): string[] {
  return [
    entry.storedAt.toISOString(),
    entry.address.agentId,
    entry.address.sessionKey,
    entry.address.hook,
    entry.address.kind,
    summarizeRecord(entry.record),
    formatMs(recordLatencyMs(entry.record)),
  ];
}

/**
 * A table printed as rows arrive: the first `bufferRows` rows size the columns (a query), or
 * the columns' least widths do (`bufferRows: 0`, a tail). Later rows keep those widths.
 */
export class TableWriter {
  private readonly buffered: string[][] = [];
  private widths: number[] | undefined;
  private rows = 0;

  constructor(
    private readonly print: (line: string) => void,
    private readonly columns: readonly Column[],
    private readonly bufferRows = 200,
  ) {}

  get count(): number {
    return this.rows;
  }

  add(raw: readonly string[]): void {
    const row = raw.map((text, i) => cell(text, this.columns[i]?.maxWidth));
    this.rows++;
    if (this.widths !== undefined) return this.print(this.line(row));
    this.buffered.push(row);
    if (this.buffered.length >= this.bufferRows) this.flush();
  }

  /** Prints what is buffered (and the header, even with no rows). */
  end(): void {
    if (this.widths === undefined) this.flush();
  }

  private flush(): void {
    this.widths = this.columns.map((c, i) =>
      Math.max(c.minWidth, c.title.length, ...this.buffered.map((r) => [...(r[i] ?? "")].length)),
    );
    this.print(this.line(this.columns.map((c) => c.title)));
    for (const row of this.buffered.splice(0)) this.print(this.line(row));
  }

  private line(row: readonly string[]): string {
    return row
      .map((text, i) => {
        const width = this.widths![i] ?? 0;
        const pad = " ".repeat(Math.max(0, width - [...text].length));
        return this.columns[i]?.align === "right" ? pad + text : text + pad;
      })
      .join("  ")
      .trimEnd();
  }
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - [...text].length));
}

function padStart(text: string, width: number): string {
  return " ".repeat(Math.max(0, width - [...text].length)) + text;
}

function outcomeOf(step: TimelineEntry): string {
  switch (step.kind) {
    case "decision":
      return step.outcome;
    case "error":
      return "error";
    case "late":
      return "late";
    case "observation":
      return step.outcome;
    case "approval":
      return `approval ${step.resolution}`;
    case "erasure":
      return "erasure";
  }
}

/**
 * A session timeline for people: per interception its time, hook, outcome, total latency and
 * who decided, then one indented line per policy (name, mode, status, effect, latency, verdict)
 * and the shadow decision; late verdicts, errors and observations in their place.
 */
export function formatTimeline(sessionKey: string, steps: readonly TimelineEntry[]): string[] {
  const agents = [...new Set(steps.map((s) => s.agentId))];
  const lines = [
    `session ${cell(sessionKey)}${agents.length > 0 ? ` (agent ${agents.map((a) => cell(a)).join(", ")})` : ""}: ${steps.length} record${steps.length === 1 ? "" : "s"}`,
  ];
  const multiAgent = agents.length > 1;
  const hookWidth = Math.max(0, ...steps.map((s) => [...cell(s.hook)].length));
  const outcomeWidth = Math.max(0, ...steps.map((s) => outcomeOf(s).length));
  const latencies = steps.map((s) => formatMs(recordLatencyMs(s.record)));
  const latencyWidth = Math.max(0, ...latencies.map((l) => l.length));
  const policies = steps.flatMap((s) => (s.kind === "decision" ? s.policies : []));
  const nameWidth = Math.max(0, ...policies.map((p) => [...cell(p.policy)].length));
  const statusWidth = Math.max(0, ...policies.map((p) => p.status.length));
  const effectWidth = Math.max(0, ...policies.map((p) => p.effect.length));
  const policyLatencyWidth = Math.max(0, ...policies.map((p) => formatMs(p.latencyMs).length));

  steps.forEach((step, i) => {
    const id =
      step.kind === "observation"
        ? `event ${cell(step.eventId)}`
        : step.kind === "erasure"
          ? `erasure ${cell(step.erasureId)}`
          : `call ${cell(step.callId)}`;
    const who = multiAgent ? `agent ${cell(step.agentId)}, ` : "";
    lines.push(
      [
        step.storedAt.toISOString(),
        pad(cell(step.hook), hookWidth),
        pad(outcomeOf(step), outcomeWidth),
        padStart(latencies[i]!, latencyWidth),
        `${cell(step.summary, 400)}  [${who}${id}]`,
      ].join("  "),
    );
    if (step.kind !== "decision") return;
    for (const p of step.policies) {
      lines.push(
        "    " +
          [
            pad(cell(p.policy), nameWidth),
            pad(p.mode, 7),
            pad(p.status, statusWidth),
            pad(p.effect, effectWidth),
            padStart(formatMs(p.latencyMs), policyLatencyWidth),
            cell(p.summary, 200),
          ].join("  "),
      );
    }
    const shadow = step.record.shadow;
    if (shadow !== undefined) {
      lines.push(
        shadow.changed
          ? `    shadow: would have been ${String(shadow.decision.outcome)} (${cell(summarizeDecision(shadow.decision), 200)})`
          : "    shadow: same decision",
      );
    }
  });
  return lines;
}
