import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BENCH_LINE_FIELDS,
  benchOutputProblem,
  formatBenchLine,
  parseBenchLine,
  type BenchLine,
} from "../../../bench/support/bench-line.js";

const sample: BenchLine = {
  p50_ratio: 1.29,
  p99_ratio: 1.59,
  throughput_ratio: 0.63,
  cpu_ratio: 1.63,
  alloc_ratio: 2.51,
  fastpath_us: 1.21,
  replay_rps: 29926,
  sign_cpu_pct: 6.7,
  sign_work_pct: 1.57,
  encrypt_cpu_pct: 4.2,
  aa_cpu_pct: -1.3,
  seal_work_pct: 2.6,
};

const line = formatBenchLine(sample);

/** The line with one `name=value` pair's text replaced. */
function withPair(name: string, pair: string): string {
  return line.replace(new RegExp(`${name}=\\S+`), pair);
}

describe("the bench: line", () => {
  it("prints every field in order, cpu_ratio and alloc_ratio beside the other ratios", () => {
    expect(line).toBe(
      "bench: p50_ratio=1.29 p99_ratio=1.59 throughput_ratio=0.63 cpu_ratio=1.63 alloc_ratio=2.51 fastpath_us=1.21 replay_rps=29926 sign_cpu_pct=6.7 sign_work_pct=1.57 encrypt_cpu_pct=4.2 aa_cpu_pct=-1.3 seal_work_pct=2.60",
    );
  });

  it("reads back what it printed, for any well-formed figures", () => {
    const positive = fc.double({ min: 0.01, max: 1e6, noNaN: true });
    const figures = fc.record({
      p50_ratio: positive,
      p99_ratio: positive,
      throughput_ratio: positive,
      cpu_ratio: positive,
      alloc_ratio: positive,
      fastpath_us: positive,
      replay_rps: fc.integer({ min: 1, max: 10_000_000 }),
      sign_cpu_pct: fc.double({ min: -1000, max: 1000, noNaN: true }),
      sign_work_pct: positive,
      encrypt_cpu_pct: fc.double({ min: -1000, max: 1000, noNaN: true }),
      aa_cpu_pct: fc.double({ min: -1000, max: 1000, noNaN: true }),
      seal_work_pct: positive,
    });
    fc.assert(
      fc.property(figures, (values) => {
        const parsed = parseBenchLine(formatBenchLine(values));
        if ("problem" in parsed) throw new Error(parsed.problem);
        for (const [name] of BENCH_LINE_FIELDS) expect(parsed[name]).toBeCloseTo(values[name], 0);
      }),
    );
  });

  it("accepts a negative signing or encryption A/B, which a noisy run can produce", () => {
    expect(parseBenchLine(withPair("sign_cpu_pct", "sign_cpu_pct=-0.5"))).toMatchObject({
      sign_cpu_pct: -0.5,
    });
    expect(parseBenchLine(withPair("encrypt_cpu_pct", "encrypt_cpu_pct=-2.1"))).toMatchObject({
      encrypt_cpu_pct: -2.1,
    });
  });

  it.each([
    ["a missing field", line.replace(" cpu_ratio=1.63", "")],
    ["an extra field", `${line} extra=1`],
    [
      "two fields swapped",
      line.replace("cpu_ratio=1.63 alloc_ratio=2.51", "alloc_ratio=2.51 cpu_ratio=1.63"),
    ],
    ["a field without a value", withPair("alloc_ratio", "alloc_ratio")],
    ["an empty value", withPair("alloc_ratio", "alloc_ratio=")],
    ["NaN (a side that measured nothing)", withPair("cpu_ratio", "cpu_ratio=NaN")],
    ["Infinity (a baseline of zero)", withPair("alloc_ratio", "alloc_ratio=Infinity")],
    ["a ratio of zero", withPair("throughput_ratio", "throughput_ratio=0.00")],
    ["a negative ratio", withPair("p50_ratio", "p50_ratio=-1.20")],
    ["a fractional count", withPair("replay_rps", "replay_rps=12.5")],
    ["an encryption A/B that measured nothing", withPair("encrypt_cpu_pct", "encrypt_cpu_pct=NaN")],
    ["a line without the encryption cost", line.replace(/ encrypt_cpu_pct=\S+/, "")],
    ["exponent notation", withPair("replay_rps", "replay_rps=1e21")],
    ["a doubled space", line.replace(" p99", "  p99")],
    ["another prefix", line.replace("bench: ", "processes: ")],
  ])("rejects %s", (_what, malformed) => {
    expect(parseBenchLine(malformed)).toHaveProperty("problem");
  });

  it("is looked for on the output's last line only", () => {
    expect(benchOutputProblem(`nats: …\n${line}\n`)).toBeUndefined();
    expect(benchOutputProblem(`${line}\nreplay: 1559 records/s\n`)).toMatch(/not a well-formed/);
    expect(benchOutputProblem("")).toMatch(/not a well-formed/);
  });
});
