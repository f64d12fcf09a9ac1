import { describe, expect, it } from "vitest";
import {
  formatHeapGrowth,
  heapGrowth,
  summarizeHeapSnapshot,
  type HeapSnapshot,
} from "../../../bench/support/heap-snapshot.js";
import { soakFigures, type SoakRun, type SoakSample } from "../../../bench/support/soak-report.js";

/** A heap snapshot in V8's layout: nodes as flat rows of node_fields, names in strings. */
function snapshot(rows: [type: number, name: string, selfSize: number][]): HeapSnapshot {
  const strings: string[] = [];
  const nodes = rows.flatMap(([type, name, size], id) => {
    if (!strings.includes(name)) strings.push(name);
    return [type, strings.indexOf(name), id, size, 0, 0, 0];
  });
  return {
    snapshot: {
      meta: {
        node_fields: [
          "type",
          "name",
          "id",
          "self_size",
          "edge_count",
          "trace_node_id",
          "detachedness",
        ],
        node_types: [
          ["hidden", "array", "string", "object", "code", "closure", "regexp", "number", "native"],
          "string",
        ],
      },
    },
    nodes,
    strings,
  };
}

const OBJECT = 3;
const STRING = 2;

describe("heap snapshot summary", () => {
  it("groups objects by constructor and other kinds by type, with count and self size", () => {
    const summary = summarizeHeapSnapshot(
      snapshot([
        [OBJECT, "Map", 100],
        [OBJECT, "Map", 50],
        [STRING, "hello", 40],
        [STRING, "world", 8],
      ]),
    );
    expect(summary.get("Map")).toEqual({ count: 2, selfBytes: 150 });
    expect(summary.get("(string)")).toEqual({ count: 2, selfBytes: 48 });
  });

  it("lists what grew most first and leaves out what did not grow", () => {
    const before = summarizeHeapSnapshot(
      snapshot([
        [OBJECT, "Call", 10],
        [OBJECT, "Gone", 99],
      ]),
    );
    const after = summarizeHeapSnapshot(
      snapshot([
        [OBJECT, "Call", 10],
        [OBJECT, "Call", 10],
        [OBJECT, "Entry", 500],
      ]),
    );
    expect(heapGrowth(before, after).map((g) => [g.key, g.countDelta, g.selfBytesDelta])).toEqual([
      ["Entry", 1, 500],
      ["Call", 1, 10],
      ["Gone", -1, -99],
    ]);
    const text = formatHeapGrowth(before, after, 10);
    expect(text).toMatch(/Entry\n.*Call$/);
    expect(text).not.toContain("Gone");
  });
});

function run(points: [t: number, rss: number, heap: number, external: number][]): SoakRun {
  const samples: SoakSample[] = points.map(([t, rssMiB, heapUsedMiB, externalMiB]) => ({
    t,
    rssMiB,
    heap: { heapUsedMiB, heapTotalMiB: heapUsedMiB, externalMiB },
  }));
  return { durationS: 600, elapsedS: 600, markS: 60, calls: 1, errors: 0, allocator: "x", samples };
}

describe("soak verdict", () => {
  it("is flat when RSS ends within 20 % of the mark", () => {
    expect(
      soakFigures(
        run([
          [1, 100, 20, 5],
          [60, 200, 40, 10],
          [600, 239, 40, 10],
        ]),
      ).verdict,
    ).toBe("flat");
  });

  it("blames the allocator when RSS grows and the heap's floor does not", () => {
    const figures = soakFigures(
      run([
        [1, 100, 20, 5],
        [55, 200, 90, 10],
        [60, 200, 40, 10],
        [595, 260, 41, 10],
        [600, 260, 95, 10],
      ]),
    );
    expect(figures.heap).toMatchObject({ mark: 40, end: 41 });
    expect(figures.verdict).toBe("growing:allocator");
  });

  it("blames retention when heap and Buffers account for the growth", () => {
    expect(
      soakFigures(
        run([
          [1, 100, 20, 5],
          [60, 200, 40, 10],
          [600, 260, 60, 25],
        ]),
      ).verdict,
    ).toBe("growing:retention");
  });
});
