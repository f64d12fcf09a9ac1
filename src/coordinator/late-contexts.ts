/**
 * What a late verdict's record needs to know about its call, kept while the call runs and for a
 * window after it: the identity (context) and the registry revision whose redaction rules apply.
 * Never the event: events may be megabytes, and whether a verdict alone would have blocked does
 * not depend on it (block rules read the verdict; the event only shapes allowlists and texts).
 *
 * Bounded twice: entries expire `windowMs` after their call finished, and beyond `maxEntries`
 * the oldest are forgotten (their late verdicts are then logged, not recorded).
 *
 * Pruned in sweeps, not on every insert: removing from the front of a Map leaves holes that each
 * later walk from the front skips again, which cost ~1.5 % of a coordinator's CPU per call. So
 * the size bound is enforced once it is exceeded by an eighth (never more than 1.125 × maxEntries
 * entries), and expired entries are swept at most every quarter window (capped at a second);
 * `get` checks the expiry itself, so a swept-late entry is never used.
 */
import type { RegistrySnapshot } from "../registry/snapshot.js";

export interface LateContext {
  context: Record<string, unknown>;
  snapshot: RegistrySnapshot;
}

interface Entry extends LateContext {
  /** Epoch ms after which a late verdict is no longer recorded; Infinity while the call runs. */
  expiresAt: number;
}

export const DEFAULT_MAX_LATE_CONTEXTS = 10_000;

export class LateContexts {
  // Insertion order is the order entries expire in: finished calls are re-inserted at the end.
  private readonly entries = new Map<string, Entry>();
  private readonly sweepAbove: number;
  private readonly sweepEveryMs: number;
  private nextSweepAt = 0;

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries = DEFAULT_MAX_LATE_CONTEXTS,
  ) {
    this.sweepAbove = maxEntries + Math.floor(maxEntries / 8);
    this.sweepEveryMs = Math.min(1000, Math.max(0, windowMs / 4));
  }

  get size(): number {
    return this.entries.size;
  }

  started(callId: string, late: LateContext): void {
    this.entries.delete(callId);
    this.entries.set(callId, {
      context: late.context,
      snapshot: late.snapshot,
      expiresAt: Infinity,
    });
    this.prune();
  }

  finished(callId: string): void {
    const entry = this.entries.get(callId);
    if (entry === undefined) return;
    this.entries.delete(callId);
    entry.expiresAt = Date.now() + this.windowMs; // the entry is this map's own: no copy
    this.entries.set(callId, entry);
    this.prune();
  }

  get(callId: string): LateContext | undefined {
    const entry = this.entries.get(callId);
    return entry === undefined || entry.expiresAt < Date.now() ? undefined : entry;
  }

  clear(): void {
    this.entries.clear();
  }

  private prune(): void {
    const now = Date.now();
    if (this.entries.size <= this.sweepAbove && now < this.nextSweepAt) return;
    this.nextSweepAt = now + this.sweepEveryMs;
    for (const [callId, entry] of this.entries) {
      if (this.entries.size <= this.maxEntries && entry.expiresAt >= now) return;
      this.entries.delete(callId);
    }
  }
}
