import fc from "fast-check";
import { Counter, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { BoundCounter, BoundHistogram } from "../../../src/observability/bound-metrics.js";

const BUCKETS = [0.0005, 0.001, 0.01, 0.5, 1, 10];
const labelNames = ["policy", "status"] as const;
type Name = (typeof labelNames)[number];

function registry(): Registry {
  const r = new Registry();
  r.setDefaultLabels({ role: "coordinator", instance_id: "c1" });
  return r;
}

/** Label values an attacker-named policy could carry: quotes, backslashes, newlines, commas. */
const labelValue = fc.constantFrom("p1", "p2", 'q"x', "a\\b", "l\nm", "k:v,", "");
const labels = fc.record({ policy: labelValue, status: fc.constantFrom("ok", "error") });
const seconds = fc.oneof(
  fc.constantFrom(...BUCKETS, 0, 11, 1e9),
  fc.double({ min: 0, max: 20, noNaN: true }),
);

async function exposition(r: Registry) {
  return { text: await r.metrics(), json: await r.getMetricsAsJSON() };
}

describe("bound metrics", () => {
  it("a bound histogram exposes what prom-client's own would, for any observations", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(labels, seconds), { maxLength: 40 }), async (seen) => {
        const [stockRegistry, boundRegistry] = [registry(), registry()];
        const config = { name: "h_seconds", help: "h", labelNames, buckets: BUCKETS };
        const stock = new Histogram<Name>({ ...config, registers: [stockRegistry] });
        const bound = new BoundHistogram<Name>({ ...config, registers: [boundRegistry] });
        for (const [l, s] of seen) {
          stock.observe(l, s);
          bound.series(l).observe(s);
        }
        expect(await exposition(boundRegistry)).toEqual(await exposition(stockRegistry));
      }),
      { numRuns: 200 },
    );
  });

  it("a bound counter exposes what prom-client's own would, for any increments", async () => {
    const by = fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1e6, noNaN: true }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(labels, by), { maxLength: 40 }), async (seen) => {
        const [stockRegistry, boundRegistry] = [registry(), registry()];
        const config = { name: "c_total", help: "c", labelNames };
        const stock = new Counter<Name>({ ...config, registers: [stockRegistry] });
        const bound = new BoundCounter<Name>({ ...config, registers: [boundRegistry] });
        for (const [l, n] of seen) {
          stock.inc(l, n);
          bound.series(l).inc(n);
        }
        expect(await exposition(boundRegistry)).toEqual(await exposition(stockRegistry));
      }),
      { numRuns: 200 },
    );
  });

  it("one series per label set, kept across a reset and counting from zero after it", async () => {
    const r = registry();
    const h = new BoundHistogram<Name>({
      name: "r_seconds",
      help: "r",
      labelNames,
      buckets: BUCKETS,
      registers: [r],
    });
    const held = h.series({ policy: "p1", status: "ok" });
    expect(h.series({ policy: "p1", status: "ok" })).toBe(held);
    expect(h.series({ policy: "p1", status: "error" })).not.toBe(held);
    held.observe(0.2);
    h.reset();
    held.observe(0.3);
    expect(await r.metrics()).toContain(
      'r_seconds_count{role="coordinator",instance_id="c1",policy="p1",status="ok"} 1',
    );
  });

  it("refuses what prom-client refuses: a non-finite observation, a counter going down", () => {
    const h = new BoundHistogram<Name>({
      name: "n_seconds",
      help: "n",
      labelNames,
      buckets: BUCKETS,
      registers: [],
    });
    const c = new BoundCounter<Name>({ name: "n_total", help: "n", labelNames, registers: [] });
    const series = h.series({ policy: "p1", status: "ok" });
    expect(() => series.observe(Number.NaN)).toThrow(TypeError);
    expect(() => series.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
    expect(() => c.series({ policy: "p1", status: "ok" }).inc(-1)).toThrow(/decrease/);
    expect(series.count).toBe(0);
  });
});
