/**
 * A child per label set, so the decision path's metrics (a few updates per call, label values
 * drawn from the registry: policies, hooks, statuses) skip prom-client's `labels()` call. What
 * this does NOT skip: prom-client 15's children still build the series' key string and check the
 * labels on every `observe`/`inc` (`npm run bench:metrics`: about 3.7 µs of a call's ~5.5 µs in
 * metrics; docs/performance.md). The cache is looked up by nested maps, one level per label, so a
 * lookup builds no key string. Bounded: beyond `max` label sets the cache starts over (the metric
 * itself keeps every series, as it always did).
 */
export class MetricChildren<C> {
  private readonly byLabels = new Map<string, Map<string, Map<string, C>>>();
  private size = 0;

  constructor(
    private readonly child: (a: string, b: string, c: string) => C,
    private readonly max = 1024,
  ) {}

  /** The child for these label values (up to three, in the metric's label order). */
  of(a: string, b = "", c = ""): C {
    const found = this.byLabels.get(a)?.get(b)?.get(c);
    return found ?? this.add(a, b, c);
  }

  private add(a: string, b: string, c: string): C {
    if (this.size >= this.max) {
      this.byLabels.clear();
      this.size = 0;
    }
    let byB = this.byLabels.get(a);
    if (byB === undefined) this.byLabels.set(a, (byB = new Map<string, Map<string, C>>()));
    let byC = byB.get(b);
    if (byC === undefined) byB.set(b, (byC = new Map<string, C>()));
    const made = this.child(a, b, c);
    byC.set(c, made);
    this.size++;
    return made;
  }
}
