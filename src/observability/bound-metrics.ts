/**
 * Pre-bound series for the decision path's metrics. A prom-client 15 child from `labels()` is not
 * bound to its series: every `observe`/`inc` copies the labels, checks them, builds the series'
 * key string and looks it up (about 4 µs of a decision's 11 updates, `npm run bench:metrics`).
 * `series(labels)` here does that once; the series it returns keeps its own numbers, and the
 * metric adds them to what prom-client exposes, in prom-client's own shapes, so `/metrics` reads
 * exactly as it did (test/unit/observability/bound-metrics.test.ts holds both to the same text).
 * Series are kept for the metric's life, as prom-client keeps its own: label values must come
 * from bounded sets (policies, hooks, statuses), as they always had to.
 */
import {
  Counter,
  Histogram,
  type CounterConfiguration,
  type HistogramConfiguration,
  type LabelValues,
} from "prom-client";

type Labels = Record<string, string>;

/** The key of a label set, in the metric's label order (values may hold any character). */
function seriesKey(names: readonly string[], labels: Labels): string {
  return JSON.stringify(names.map((name) => labels[name] ?? null));
}

function finite(value: number): number {
  if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
  return value;
}

/** One histogram series: an observation is a bucket search and three additions. */
export class HistogramSeries {
  /** Per upper bound, not cumulative; observations above the last bound count only in `count`. */
  readonly perBound: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly bounds: readonly number[],
  ) {
    this.perBound = new Float64Array(bounds.length);
  }

  observe(seconds: number): void {
    finite(seconds);
    const bounds = this.bounds;
    for (let b = 0; b < bounds.length; b++) {
      if (seconds <= bounds[b]!) {
        this.perBound[b]!++;
        break;
      }
    }
    this.sum += seconds;
    this.count++;
  }

  reset(): void {
    this.perBound.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/** prom-client's value shape for one line of a histogram (its registry formats it). */
function line(
  labels: Record<string, string | number>,
  value: number,
  metricName: string,
  sharedLabels: Labels,
  exemplar: null | undefined,
) {
  return { labels, sharedLabels, value, metricName, exemplar };
}

/** prom-client's histograms and counters have this method, which its typings leave out. */
interface PromStringSource {
  getForPromString(this: unknown): Promise<{ values: unknown[] }>;
}

export class BoundHistogram<T extends string> extends Histogram<T> {
  private readonly bound = new Map<string, HistogramSeries>();
  private readonly names: readonly string[];
  private readonly bounds: readonly number[];
  /** prom-client sets it; its typings do not declare it. */
  declare readonly name: string;

  constructor(config: HistogramConfiguration<T> & { labelNames: readonly T[]; buckets: number[] }) {
    super(config);
    this.names = config.labelNames;
    this.bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The series of these labels, bound once. */
  series(labels: LabelValues<T>): HistogramSeries {
    const values = labels as Labels;
    const key = seriesKey(this.names, values);
    let found = this.bound.get(key);
    if (found === undefined) {
      found = new HistogramSeries({ ...values }, this.bounds);
      this.bound.set(key, found);
    }
    return found;
  }

  /** What the registry's text format reads (and `get()` splays): prom-client's series, then ours. */
  async getForPromString() {
    const own = await (Histogram.prototype as unknown as PromStringSource).getForPromString.call(
      this,
    );
    const bucket = `${this.name}_bucket`;
    for (const s of this.bound.values()) {
      let cumulative = 0;
      for (let b = 0; b < this.bounds.length; b++) {
        cumulative += s.perBound[b]!;
        own.values.push(line({ le: this.bounds[b]! }, cumulative, bucket, s.labels, null));
      }
      own.values.push(line({ le: "+Inf" }, s.count, bucket, s.labels, null));
      own.values.push(line({}, s.sum, `${this.name}_sum`, s.labels, undefined));
      own.values.push(line({}, s.count, `${this.name}_count`, s.labels, undefined));
    }
    return own;
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    const bound = this.bound as Map<string, HistogramSeries> | undefined;
    for (const s of bound?.values() ?? []) s.reset();
  }
}

/** One counter series. */
export class CounterSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  inc(by = 1): void {
    if (finite(by) < 0) throw new Error("It is not possible to decrease a counter");
    this.value += by;
  }
}

export class BoundCounter<T extends string> extends Counter<T> {
  private readonly bound = new Map<string, CounterSeries>();
  private readonly names: readonly string[];

  constructor(config: CounterConfiguration<T> & { labelNames: readonly T[] }) {
    super(config);
    this.names = config.labelNames;
  }

  /** The series of these labels, bound once. */
  series(labels: LabelValues<T>): CounterSeries {
    const values = labels as Labels;
    const key = seriesKey(this.names, values);
    let found = this.bound.get(key);
    if (found === undefined) {
      found = new CounterSeries({ ...values });
      this.bound.set(key, found);
    }
    return found;
  }

  override async get() {
    const own = await super.get();
    for (const s of this.bound.values()) {
      own.values.push({ value: s.value, labels: { ...s.labels } as LabelValues<T> });
    }
    return own;
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor calls reset() before this class's fields exist.
    const bound = this.bound as Map<string, CounterSeries> | undefined;
    for (const s of bound?.values() ?? []) s.value = 0;
  }
}
