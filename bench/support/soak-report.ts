/**
 * The soak benchmark's verdict from its samples: RSS against the mark (the goal: end within
 * 20 % of it) and, beside it, V8's heap and Node's external memory, so one run tells retention
 * (the heap grows with RSS) from allocator fragmentation (RSS grows, the heap stays flat).
 */
import type { HeapFigures } from "./process-memory.js";

export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  rssMiB: number;
  /** Missing when the metrics endpoint did not answer in time. */
  heap?: HeapFigures;
}

export interface SoakRun {
  durationS: number;
  elapsedS: number;
  markS: number;
  calls: number;
  errors: number;
  allocator: string;
  samples: SoakSample[];
}

/** RSS may end this far above the mark (percent). */
export const FLAT_GOAL_PERCENT = 20;
/**
 * The mark and the end are read over the WINDOW_S seconds up to them, not from one sample: a
 * sample can land on a few large events in flight (RSS swings by ±20 MiB from second to second
 * under the soak's load) or just before a collection (heapUsed).
 */
const WINDOW_S = 30;

const round = (n: number) => Math.round(n * 10) / 10;
const percent = (from: number, to: number) => ((to - from) / from) * 100;

function windowUpTo(samples: SoakSample[], at: number): SoakSample[] {
  return samples.filter((s) => s.t > at - WINDOW_S && s.t <= at);
}

/** RSS: the median over the window. */
function rssAround(samples: SoakSample[], at: number): number {
  const values = windowUpTo(samples, at)
    .map((s) => s.rssMiB)
    .sort((a, b) => a - b);
  return values.length === 0 ? Number.NaN : values[Math.floor((values.length - 1) / 2)]!;
}

/**
 * heapUsed is a sawtooth under load (30 to 170 MiB here): only after a full collection, every
 * 20 to 60 s, is it close to what is live. So the heap is read as its floor over a minute: the
 * minute after the mark (the one before it is still warming up) and the last minute.
 */
const HEAP_WINDOW_S = 60;

function heapFloor(
  samples: SoakSample[],
  from: number,
  to: number,
  pick: (h: HeapFigures) => number,
): number {
  const values = samples.flatMap((s) =>
    s.t >= from && s.t <= to && s.heap !== undefined ? [pick(s.heap)] : [],
  );
  return values.length === 0 ? Number.NaN : Math.min(...values);
}

/** RSS's least-squares slope from `from` seconds to the end, in MiB per minute. */
function rssSlope(samples: SoakSample[], from: number): number {
  const points = samples.filter((s) => s.t >= from);
  const meanT = points.reduce((sum, s) => sum + s.t, 0) / points.length;
  const meanRss = points.reduce((sum, s) => sum + s.rssMiB, 0) / points.length;
  let covariance = 0;
  let variance = 0;
  for (const s of points) {
    covariance += (s.t - meanT) * (s.rssMiB - meanRss);
    variance += (s.t - meanT) ** 2;
  }
  return (covariance / variance) * 60;
}

export interface SoakFigures {
  rss: {
    start: number;
    mark: number;
    peak: number;
    end: number;
    endVsMark: number;
    /** From the mark to the end: a leak is a steady climb, a high-water mark is not. */
    slopeMiBPerMin: number;
  };
  heap: { start: number; mark: number; peak: number; end: number; endVsMark: number };
  external: { mark: number; end: number };
  /** V8's committed heap at the mark's and the last sample: it grows in steps, it does not swing. */
  heapTotal: { mark: number; end: number };
  verdict: "flat" | "growing:retention" | "growing:allocator";
}

export function soakFigures(run: SoakRun): SoakFigures {
  const { samples } = run;
  const markSample = samples.find((s) => s.t >= run.markS);
  const markT = markSample?.t ?? Number.NaN;
  const endT = samples.at(-1)?.t ?? Number.NaN;
  const rss = {
    start: samples[0]?.rssMiB ?? Number.NaN,
    mark: rssAround(samples, markT),
    peak: Math.max(...samples.map((s) => s.rssMiB)),
    end: rssAround(samples, endT),
  };
  const used = (h: HeapFigures) => h.heapUsedMiB;
  const external = (h: HeapFigures) => h.externalMiB;
  const heap = {
    start: samples.find((s) => s.heap !== undefined)?.heap?.heapUsedMiB ?? Number.NaN,
    mark: heapFloor(samples, markT, markT + HEAP_WINDOW_S, used),
    peak: Math.max(...samples.flatMap((s) => (s.heap === undefined ? [] : [s.heap.heapUsedMiB]))),
    end: heapFloor(samples, endT - HEAP_WINDOW_S, endT, used),
  };
  const ext = {
    mark: heapFloor(samples, markT, markT + HEAP_WINDOW_S, external),
    end: heapFloor(samples, endT - HEAP_WINDOW_S, endT, external),
  };
  const rssEndVsMark = percent(rss.mark, rss.end);
  // Retention when what JavaScript holds (heap and Buffers) accounts for half the RSS growth or
  // more; otherwise the growth is the allocator's (freed memory not handed back, fragmentation).
  const heldGrowth = heap.end - heap.mark + (ext.end - ext.mark);
  const verdict =
    rssEndVsMark <= FLAT_GOAL_PERCENT
      ? "flat"
      : heldGrowth >= (rss.end - rss.mark) / 2
        ? "growing:retention"
        : "growing:allocator";
  return {
    rss: { ...rss, endVsMark: rssEndVsMark, slopeMiBPerMin: rssSlope(samples, markT) },
    heap: { ...heap, endVsMark: percent(heap.mark, heap.end) },
    external: ext,
    heapTotal: {
      mark: markSample?.heap?.heapTotalMiB ?? Number.NaN,
      end: samples.findLast((s) => s.heap !== undefined)?.heap?.heapTotalMiB ?? Number.NaN,
    },
    verdict,
  };
}

/** The soak's last line: what the README's Benchmark section reports. */
export function formatSoakVerdict(run: SoakRun, f: SoakFigures): string {
  const mark = `at_${Math.round(run.markS)}s`;
  return (
    `soak: duration_s=${run.durationS} calls=${run.calls} errors=${run.errors} ` +
    `rate=${Math.round(run.calls / run.elapsedS)}/s allocator=${run.allocator.replace(" ", "_")} ` +
    `rss_mib start=${f.rss.start} ${mark}=${f.rss.mark} peak=${f.rss.peak} end=${f.rss.end} ` +
    `end_vs_mark=${f.rss.endVsMark.toFixed(1)}% slope=${f.rss.slopeMiBPerMin.toFixed(2)}/min ` +
    `heap_mib start=${f.heap.start} ${mark}=${round(f.heap.mark)} peak=${f.heap.peak} ` +
    `end=${round(f.heap.end)} heap_end_vs_mark=${f.heap.endVsMark.toFixed(1)}% ` +
    `heap_total_mib ${mark}=${f.heapTotal.mark} end=${f.heapTotal.end} ` +
    `external_mib ${mark}=${round(f.external.mark)} end=${round(f.external.end)} ` +
    `verdict=${f.verdict}`
  );
}
