import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { MetricChildren } from "../../../src/observability/metric-children.js";

describe("MetricChildren", () => {
  it("observes into the series of its labels, reusing one child per label set", async () => {
    const registry = new Registry();
    const histogram = new Histogram({
      name: "t_seconds",
      help: "t",
      labelNames: ["policy", "status"],
      buckets: [1],
      registers: [registry],
    });
    let made = 0;
    const children = new MetricChildren((policy, status) => {
      made++;
      return histogram.labels({ policy, status });
    });
    children.of("a", "ok").observe(0.5);
    children.of("a", "ok").observe(2);
    children.of("b", "error").observe(0.5);
    expect(made).toBe(2);
    const text = await registry.metrics();
    expect(text).toContain('t_seconds_count{policy="a",status="ok"} 2');
    expect(text).toContain('t_seconds_count{policy="b",status="error"} 1');
  });

  it("keeps at most `max` children, and a label set dropped from the cache still counts", async () => {
    const registry = new Registry();
    const histogram = new Histogram({
      name: "u_seconds",
      help: "u",
      labelNames: ["policy"],
      buckets: [1],
      registers: [registry],
    });
    let made = 0;
    const children = new MetricChildren((policy) => {
      made++;
      return histogram.labels({ policy });
    }, 2);
    for (const policy of ["a", "b", "c", "a"]) children.of(policy).observe(0.1);
    expect(made).toBe(4); // "c" started the cache over, so "a" was made again
    expect(await registry.metrics()).toContain('u_seconds_count{policy="a"} 2');
  });
});

describe("MetricChildren's label sets", () => {
  it("keeps label sets apart whatever characters their values hold", () => {
    const children = new MetricChildren((a, b, c) => `${JSON.stringify([a, b, c])}`);
    // With one joined key these pairs could meet; each must get its own child.
    const sets: [string, string, string][] = [
      ["a\u0000b", "c", ""],
      ["a", "b\u0000c", ""],
      ["a", "b", "c"],
      ["", "", ""],
      ["a", "", ""],
    ];
    for (const set of sets) expect(children.of(...set)).toBe(JSON.stringify(set));
    expect(children.of("a")).toBe(JSON.stringify(["a", "", ""]));
  });
});
