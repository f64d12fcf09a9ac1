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

/** What one bucket counted. */
export interface WindowBucket {
  /** Start of the bucket, ms since the epoch, a multiple of BUCKET_MS. */
  start: number;
  toolCalls: number;
  refusals: number;
  /** Tool calls per class, by the class's index in TOOL_CLASSES (numbers add fast). */
  classes: number[];
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
    kept.splice(
      index + 1,
      0,
      counted({ start, toolCalls: 0, refusals: 0, classes: ZERO_CLASSES }, entry),
    );
  }
  return kept.length > WINDOW_BUCKETS ? kept.slice(-WINDOW_BUCKETS) : kept;
}

function counted(
  bucket: { start: number; toolCalls: number; refusals: number; classes: readonly number[] },
  entry: BucketEntry,
): WindowBucket {
  const classes = bucket.classes.slice();
  let toolCalls = bucket.toolCalls;
  if (entry.toolCall !== undefined) {
    toolCalls++;
    const at = CLASS_INDEX.get(entry.toolCall) ?? CLASS_INDEX.get("unknown")!;
    classes[at] = (classes[at] ?? 0) + 1;
  }
  const refusals = entry.refusal === true ? bucket.refusals + 1 : bucket.refusals;
  return { start: bucket.start, toolCalls, refusals, classes };
}

/**
 * Each window's counts at `now`: every bucket that overlaps it, and any from a later time. One
 * pass, the windows nested (m15 ⊇ m5 ⊇ m1): it runs for every Cedar request that reads the session.
 */
export function recentCounts(buckets: readonly WindowBucket[], now: number): RecentCounts {
  const sums = { m1: new WindowSum(), m5: new WindowSum(), m15: new WindowSum() };
  for (const bucket of buckets) {
    const end = bucket.start + BUCKET_MS;
    if (end <= now - WINDOWS.m15) continue;
    sums.m15.add(bucket);
    if (end > now - WINDOWS.m5) sums.m5.add(bucket);
    if (end > now - WINDOWS.m1) sums.m1.add(bucket);
  }
  return { m1: sums.m1.counts(), m5: sums.m5.counts(), m15: sums.m15.counts() };
}

const CLASS_INDEX = new Map<string, number>(TOOL_CLASSES.map((c, i) => [c, i]));
/** A packed array of zeros, copied (never written): holes would make every sum slow. */
const ZERO_CLASSES: readonly number[] = TOOL_CLASSES.map(() => 0);

class WindowSum {
  toolCalls = 0;
  refusals = 0;
  readonly classes: number[] = TOOL_CLASSES.map(() => 0);

  add(bucket: WindowBucket): void {
    this.toolCalls += bucket.toolCalls;
    this.refusals += bucket.refusals;
    const counts = bucket.classes;
    const n = Math.min(counts.length, this.classes.length);
    for (let i = 0; i < n; i++) this.classes[i]! += counts[i] ?? 0;
  }

  counts(): WindowCounts {
    const classCounts = zeroCounts();
    for (let i = 0; i < TOOL_CLASSES.length; i++) classCounts[TOOL_CLASSES[i]!] = this.classes[i]!;
    return { toolCalls: this.toolCalls, refusals: this.refusals, classCounts };
  }
}

const ZERO_COUNTS = Object.freeze(
  Object.fromEntries(TOOL_CLASSES.map((c) => [c, 0])) as Record<ToolClass, number>,
);

/** Every class, 0 (a fresh copy). */
export function zeroCounts(): Record<ToolClass, number> {
  return Object.assign({}, ZERO_COUNTS);
}
