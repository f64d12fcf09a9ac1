/**
 * Recent latency and error rate of one stream of work (a worker's hook, a coordinator's calls):
 * the last `capacity` samples younger than `maxAgeMs`, in a fixed ring, so a long-running
 * process reports what it does now, in constant memory.
 */
import { z } from "zod";

export const DEFAULT_WINDOW_SAMPLES = 1024;
export const DEFAULT_WINDOW_MAX_AGE_MS = 5 * 60_000;

export const RecentStats = z
  .object({
    count: z.number().int().nonnegative().describe("Samples in the window."),
    p50Ms: z.number().nonnegative().optional().describe("Median latency (absent without samples)."),
    p99Ms: z.number().nonnegative().optional().describe("99th percentile latency."),
    errorRate: z
      .number()
      .min(0)
      .max(1)
      .describe("Share of samples that were not ok (0 without samples)."),
  })
  .describe("Recent latency and errors over a bounded window (last samples, last minutes).");
export type RecentStats = z.infer<typeof RecentStats>;

export class RecentWindow {
  private readonly latencies: Float64Array;
  private readonly times: Float64Array;
  private readonly failed: Uint8Array;
  private next = 0;
  private filled = 0;

  constructor(
    private readonly capacity = DEFAULT_WINDOW_SAMPLES,
    private readonly maxAgeMs = DEFAULT_WINDOW_MAX_AGE_MS,
  ) {
    this.latencies = new Float64Array(capacity);
    this.times = new Float64Array(capacity);
    this.failed = new Uint8Array(capacity);
  }

  add(latencyMs: number, ok: boolean, now = Date.now()): void {
    this.latencies[this.next] = latencyMs;
    this.times[this.next] = now;
    this.failed[this.next] = ok ? 0 : 1;
    this.next = (this.next + 1) % this.capacity;
    this.filled = Math.min(this.filled + 1, this.capacity);
  }

  stats(now = Date.now()): RecentStats {
    const recent: number[] = [];
    let failures = 0;
    for (let i = 0; i < this.filled; i++) {
      if (now - (this.times[i] ?? 0) > this.maxAgeMs) continue;
      recent.push(this.latencies[i] ?? 0);
      failures += this.failed[i] ?? 0;
    }
    if (recent.length === 0) return { count: 0, errorRate: 0 };
    recent.sort((a, b) => a - b);
    return {
      count: recent.length,
      p50Ms: round(quantile(recent, 0.5)),
      p99Ms: round(quantile(recent, 0.99)),
      errorRate: round(failures / recent.length),
    };
  }
}

/** Nearest-rank quantile of sorted values. */
function quantile(sorted: readonly number[], q: number): number {
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
