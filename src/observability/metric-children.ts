/**
 * prom-client hashes a labels object (sorting its keys) on every `observe(labels, value)`; the
 * child returned by `labels(...)` is hashed once. Metrics on the decision path observe a few
 * values per call with label sets drawn from the registry (policies, hooks, statuses), so a child
 * per label set is kept here. Bounded: beyond `max` label sets the cache starts over (the metric
 * itself keeps every series, as it always did).
 */
export class MetricChildren<C> {
  private readonly byKey = new Map<string, C>();

  constructor(
    private readonly child: (a: string, b: string, c: string) => C,
    private readonly max = 1024,
  ) {}

  /** The child for these label values (up to three, in the metric's label order). */
  of(a: string, b = "", c = ""): C {
    const key = `${a}\u0000${b}\u0000${c}`;
    let found = this.byKey.get(key);
    if (found === undefined) {
      if (this.byKey.size >= this.max) this.byKey.clear();
      found = this.child(a, b, c);
      this.byKey.set(key, found);
    }
    return found;
  }
}
