/**
 * Counts within a time window (`context.session.recent`): "20 shell calls in 5 minutes". Memory is
 * bounded by buckets, not by calls: a session keeps at most WINDOW_BUCKETS buckets of
 * BUCKET_MS each, only the ones that saw something, and a count is the sum of the buckets that
 * overlap the window. A count is therefore never less than the true one and at most one bucket
 * more: a rule errs on the strict side. Time is the call's own (the coordinator's arrival time,
 * the record's in replay), never the reader's clock, so a replay counts what the live run counted.
 */
import { TOOL_CLASSES, type ToolClass } from "../vocabulary/classes.js";

/** Width of one bucket. */
export const BUCKET_MS = 10_000;
/** The windows a policy can read, by name: `recent.m1`, `recent.m5`, `recent.m15`. */
export const WINDOWS = { m1: 60_000, m5: 300_000, m15: 900_000 } as const;
export type WindowName = keyof typeof WINDOWS;
/** Buckets kept: every bucket that can overlap the longest window, the partial one included. */
export const WINDOW_BUCKETS = WINDOWS.m15 / BUCKET_MS + 1;

/** What one bucket counted; classes only those seen (most buckets see one or two). */
export interface WindowBucket {
  /** Start of the bucket, ms since the epoch, a multiple of BUCKET_MS. */
  start: number;
  toolCalls: number;
  refusals: number;
  classes: Partial<Record<ToolClass, number>>;
}

/** One window's counts as Cedar reads them. */
export interface WindowCounts {
  toolCalls: number;
  refusals: number;
  classCounts: Record<ToolClass, number>;
}

export type RecentCounts = Record<WindowName, WindowCounts>;

/** What one decided call adds to its bucket. */
export interface BucketEntry {
  at: number;
  toolCall?: ToolClass;
  refusal?: boolean;
}

/**
 * The buckets with one more event. A new list: the old one may still be read by a call in flight.
 * Buckets that no longer overlap the longest window are dropped; a time that is not a finite
 * number counts in the newest bucket (never lost). Runs per decided call: the usual case (the
 * newest bucket, nothing expired) copies the list once and one bucket, nothing else.
 */
export function countIn(buckets: readonly WindowBucket[], entry: BucketEntry): WindowBucket[] {
  const newest = buckets.at(-1);
  const at = Number.isFinite(entry.at) ? entry.at : (newest?.start ?? 0);
  const start = Math.floor(at / BUCKET_MS) * BUCKET_MS;
  // Kept while it overlaps the longest window ending at this event (or any later time).
  let first = 0;
  while (first < buckets.length && buckets[first]!.start + BUCKET_MS <= at - WINDOWS.m15) first++;
  const kept = buckets.slice(first);
  let index = kept.length - 1;
  while (index >= 0 && kept[index]!.start > start) index--; // a call decided late: an older bucket
  if (index >= 0 && kept[index]!.start === start) {
    kept[index] = counted(kept[index]!, entry);
  } else {
    kept.splice(index + 1, 0, counted({ start, toolCalls: 0, refusals: 0, classes: {} }, entry));
  }
  return kept.length > WINDOW_BUCKETS ? kept.slice(-WINDOW_BUCKETS) : kept;
}

function counted(bucket: WindowBucket, entry: BucketEntry): WindowBucket {
  const classes = Object.assign({}, bucket.classes);
  let toolCalls = bucket.toolCalls;
  if (entry.toolCall !== undefined) {
    toolCalls++;
    classes[entry.toolCall] = (classes[entry.toolCall] ?? 0) + 1;
  }
  const refusals = entry.refusal === true ? bucket.refusals + 1 : bucket.refusals;
  return { start: bucket.start, toolCalls, refusals, classes };
}

/** Each window's counts at `now`: every bucket that overlaps it, and any from a later time. */
export function recentCounts(buckets: readonly WindowBucket[], now: number): RecentCounts {
  const out = {} as RecentCounts;
  for (const name of Object.keys(WINDOWS) as WindowName[]) {
    const from = now - WINDOWS[name];
    const counts: WindowCounts = { toolCalls: 0, refusals: 0, classCounts: zeroCounts() };
    for (const bucket of buckets) {
      if (bucket.start + BUCKET_MS <= from) continue;
      counts.toolCalls += bucket.toolCalls;
      counts.refusals += bucket.refusals;
      for (const [c, n] of Object.entries(bucket.classes) as [ToolClass, number][]) {
        counts.classCounts[c] = (counts.classCounts[c] ?? 0) + n;
      }
    }
    out[name] = counts;
  }
  return out;
}

/** Every class, 0. */
export function zeroCounts(): Record<ToolClass, number> {
  return Object.fromEntries(TOOL_CLASSES.map((c) => [c, 0])) as Record<ToolClass, number>;
}
