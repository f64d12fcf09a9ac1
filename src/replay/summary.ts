/** Counting replay results: per hook, per policy that caused changes, per kind of change. */
import type { ReplayResult } from "./types.js";

export interface ReplaySummary {
  /** Decision records replayed. */
  records: number;
  changed: number;
  unchanged: number;
  /** Records after the first change of their session (the agent would have seen something else). */
  counterfactual: number;
  /** Records whose inputs were masked by redaction: not fully re-evaluated. */
  incomplete: number;
  sessions: number;
  /** Sessions with at least one changed decision. */
  changedSessions: number;
  byHook: Record<string, { records: number; changed: number }>;
  /** Changed records each policy caused (a record may name several policies). */
  byPolicy: Record<string, number>;
  /** Changed records per kind of change: `allow→block`, `block→allow`, `modify: content`, ... */
  byChange: Record<string, number>;
}

/** Streams: add results one by one (a long replay need not keep them), read `summary` at the end. */
export class ReplaySummarizer {
  private readonly sessions = new Set<string>();
  private readonly changedSessions = new Set<string>();
  private readonly counts: ReplaySummary = {
    records: 0,
    changed: 0,
    unchanged: 0,
    counterfactual: 0,
    incomplete: 0,
    sessions: 0,
    changedSessions: 0,
    byHook: {},
    byPolicy: {},
    byChange: {},
  };

  add(result: ReplayResult): void {
    const c = this.counts;
    const session = JSON.stringify([result.agentId, result.sessionKey]);
    this.sessions.add(session);
    c.records++;
    if (result.counterfactual) c.counterfactual++;
    if (result.incomplete !== undefined) c.incomplete++;
    const hook = (c.byHook[result.hook] ??= { records: 0, changed: 0 });
    hook.records++;
    if (result.status === "unchanged") {
      c.unchanged++;
      return;
    }
    c.changed++;
    hook.changed++;
    this.changedSessions.add(session);
    for (const policy of result.causes) c.byPolicy[policy] = (c.byPolicy[policy] ?? 0) + 1;
    const change = result.change ?? "other";
    c.byChange[change] = (c.byChange[change] ?? 0) + 1;
  }

  get summary(): ReplaySummary {
    return {
      ...this.counts,
      sessions: this.sessions.size,
      changedSessions: this.changedSessions.size,
      byHook: sortKeys(this.counts.byHook),
      byPolicy: sortKeys(this.counts.byPolicy),
      byChange: sortKeys(this.counts.byChange),
    };
  }
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(
    Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}

export function summarizeReplay(results: Iterable<ReplayResult>): ReplaySummary {
  const summarizer = new ReplaySummarizer();
  for (const result of results) summarizer.add(result);
  return summarizer.summary;
}
