import { describe, expect, it } from "vitest";
import { RecentWindow } from "../../../src/observability/recent-window.js";

describe("RecentWindow", () => {
  it("reports nearest-rank p50/p99 and the share of failures", () => {
    const w = new RecentWindow(1000, 60_000);
    for (let i = 1; i <= 100; i++) w.add(i, i % 10 !== 0, 1_000);
    expect(w.stats(1_000)).toEqual({ count: 100, p50Ms: 50, p99Ms: 99, errorRate: 0.1 });
  });

  it("keeps only the last `capacity` samples, in constant memory", () => {
    const w = new RecentWindow(4, 60_000);
    for (const ms of [100, 100, 100, 1, 2, 3, 4]) w.add(ms, true, 0);
    expect(w.stats(0)).toMatchObject({ count: 4, p50Ms: 2, p99Ms: 4 });
  });

  it("forgets samples older than maxAgeMs, and says nothing without samples", () => {
    const w = new RecentWindow(10, 1000);
    w.add(5, false, 0);
    w.add(7, true, 1500);
    expect(w.stats(1600)).toEqual({ count: 1, p50Ms: 7, p99Ms: 7, errorRate: 0 });
    expect(w.stats(5000)).toEqual({ count: 0, errorRate: 0 });
  });
});
