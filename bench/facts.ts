/**
 * `npm run bench:facts`: the cost of shell facts alone (bench/support/facts-run.ts), with the
 * pathological shapes one by one. The LAST line is the one `npm run bench` prints too:
 *   facts: p50_us=<typical command, µs> p99_us=<…> max_ms=<slowest pathological command, ms>
 * Goals (issue 30): p50 ≤ 20 µs, a 64 KB pathological command ≤ 5 ms. Wall times on a busy
 * machine include waiting for a core; the CPU columns say what the work itself cost.
 */
import { factsLine, measureShellFacts } from "./support/facts-run.js";

const cost = await measureShellFacts(Number(process.env.BENCH_FACTS_ROUNDS ?? 20));
console.log(
  `corpus: ${cost.commands} commands, ${cost.samples} timed calls; process CPU ${cost.cpuUsPerCall.toFixed(1)} µs per call`,
);
console.log(
  `parser-free (plain) path: ${cost.plainCommands} of ${cost.commands} commands; a repeat through createShellFactsMemo: p50 ${cost.memoP50Us.toFixed(1)} µs`,
);
console.log(
  "pathological (best of 5): filled to 64 KB, then each shape at the length and token limits",
);
for (const p of cost.pathological) {
  const outcome = p.unparsed === undefined ? "parsed" : `unparsed (${p.unparsed})`;
  const wall = `${p.ms.toFixed(3).padStart(8)} ms`;
  const cpu = `cpu ${p.cpuMs.toFixed(3).padStart(8)} ms`;
  console.log(
    `  ${p.name.padEnd(14)} ${String(p.length).padStart(6)} chars ${wall}  ${cpu}  ${outcome}`,
  );
}
console.log(factsLine(cost));
