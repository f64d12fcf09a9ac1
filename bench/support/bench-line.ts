/**
 * The last line of `npm run bench`, the one people and CI read: its fields, in order, written and
 * checked from this one list so the writer (bench/bench.ts) and the smoke's check (bench/smoke.ts)
 * cannot drift apart. The check is about form only (every field, once, in order, a finite
 * number; ratios and times above zero): a slow or a regressed run is a figure to read, not a failure.
 */

/** How a field's value must look to be well-formed. */
type FieldKind = "positive" | "count" | "signed";

/** The fields of the `bench:` line, in the order printed. */
export const BENCH_LINE_FIELDS = [
  ["p50_ratio", "positive"],
  ["p99_ratio", "positive"],
  ["throughput_ratio", "positive"],
  // hookbus's Node CPU per call / the baseline's, at concurrency 64, from the same run.
  ["cpu_ratio", "positive"],
  // hookbus's V8 heap bytes allocated per call / the baseline's, from the same run.
  ["alloc_ratio", "positive"],
  ["fastpath_us", "positive"],
  ["replay_rps", "count"],
  // A paired A/B of two noisy CPU figures: below zero on a noisy run is a figure, not a fault.
  ["sign_cpu_pct", "signed"],
  ["sign_work_pct", "positive"],
  // The same A/B with encryption on (docs/privacy.md), and the two plain sides against each
  // other: the noise floor the two figures above and this one are read against.
  ["encrypt_cpu_pct", "signed"],
  ["aa_cpu_pct", "signed"],
  ["seal_work_pct", "positive"],
] as const satisfies readonly (readonly [string, FieldKind])[];

export type BenchLineField = (typeof BENCH_LINE_FIELDS)[number][0];
export type BenchLine = Record<BenchLineField, number>;

const DECIMALS: Record<BenchLineField, number> = {
  p50_ratio: 2,
  p99_ratio: 2,
  throughput_ratio: 2,
  cpu_ratio: 2,
  alloc_ratio: 2,
  fastpath_us: 2,
  replay_rps: 0,
  sign_cpu_pct: 1,
  sign_work_pct: 2,
  encrypt_cpu_pct: 1,
  aa_cpu_pct: 1,
  seal_work_pct: 2,
};

/** The line as printed: `bench: p50_ratio=1.29 p99_ratio=1.59 … seal_work_pct=2.10`. */
export function formatBenchLine(values: BenchLine): string {
  const fields = BENCH_LINE_FIELDS.map(
    ([name]) => `${name}=${values[name].toFixed(DECIMALS[name])}`,
  );
  return `bench: ${fields.join(" ")}`;
}

/** A number as the line prints it: optional minus, digits, optional decimals (no NaN, no 1e9). */
const NUMBER = /^-?\d+(\.\d+)?$/;

function wellFormed(kind: FieldKind, text: string): boolean {
  if (!NUMBER.test(text)) return false;
  const value = Number(text);
  if (kind === "signed") return true;
  if (kind === "count") return Number.isInteger(value) && value > 0;
  return value > 0;
}

/**
 * The values of a `bench:` line, or what is wrong with it (the first problem found): a missing,
 * extra, repeated or out-of-order field, or a value that is not a finite number of its kind.
 */
export function parseBenchLine(line: string): BenchLine | { problem: string } {
  const prefix = "bench: ";
  if (!line.startsWith(prefix)) return { problem: `the line does not start with "${prefix}"` };
  const pairs = line.slice(prefix.length).split(" ");
  const names = BENCH_LINE_FIELDS.map(([name]) => name);
  if (pairs.length !== names.length)
    return { problem: `${pairs.length} fields, expected ${names.length}: ${names.join(" ")}` };
  const values = {} as BenchLine;
  for (const [i, [name, kind]] of BENCH_LINE_FIELDS.entries()) {
    const pair = pairs[i]!;
    const eq = pair.indexOf("=");
    const got = eq < 0 ? pair : pair.slice(0, eq);
    if (got !== name) return { problem: `field ${i + 1} is "${got}", expected "${name}"` };
    const text = pair.slice(eq + 1);
    if (!wellFormed(kind, text)) return { problem: `${name}=${text} is not a well-formed ${kind}` };
    values[name] = Number(text);
  }
  return values;
}

/** What is wrong with a bench run's output as a whole: undefined when its last line is well-formed. */
export function benchOutputProblem(stdout: string): string | undefined {
  const last = stdout.trimEnd().split("\n").at(-1) ?? "";
  const parsed = parseBenchLine(last);
  if ("problem" in parsed)
    return `the last line is not a well-formed bench: line (${parsed.problem}): ${JSON.stringify(last)}`;
  return undefined;
}
