/**
 * A child per label set, so the decision path's metrics (a few updates per call, label values
 * drawn from the registry: policies, hooks, statuses) reach their series without label work:
 * the children are bound series (bound-metrics.ts; prom-client's own `labels()` children rebuild
 * the series' key on every update), and this cache is looked up by nested maps, one level per
 * label, so a lookup builds no key string either (`npm run bench:metrics`, docs/performance.md).
 * Bounded: beyond `max` label sets the cache starts over (the metric keeps every series, as
 * prom-client's always did).
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
