/**
 * `npm run fuzz [-- --count N --seed S --rounds R --allocator glibc|jemalloc]`: hostile messages against a real coordinator process;
 * prints the figures and exits 1 when any of crashes, unanswered, uncoded or bad records is not 0,
 * or when `hookbus audit verify` on the fuzzed (sealed, signed) log finds anything.
 */
import { parseArgs } from "node:util";
import { jemallocEnv } from "../support/allocator.js";
import { runFuzz } from "./run-fuzz.js";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "10000" },
    seed: { type: "string", default: "1" },
    concurrency: { type: "string", default: "16" },
    rounds: { type: "string", default: "1" },
    allocator: { type: "string", default: "glibc" },
  },
});
if (values.allocator !== "glibc" && values.allocator !== "jemalloc") {
  console.error(`--allocator must be glibc or jemalloc, got ${values.allocator}`);
  process.exit(2);
}
const started = Date.now();
process.stderr.write("fuzz: starting nats-server and a coordinator\n");
const report = await runFuzz({
  count: Number(values.count),
  seed: Number(values.seed),
  concurrency: Number(values.concurrency),
  rounds: Number(values.rounds),
  verify: true,
  ...(values.allocator === "jemalloc" ? { coordinatorEnv: jemallocEnv() } : {}),
  progress: (sent, r) =>
    process.stderr.write(
      `  … ${sent} sent, ${r.unanswered.length} unanswered, RSS peak ${r.rssMiB.peak} MiB\n`,
    ),
});
const seconds = ((Date.now() - started) / 1000).toFixed(1);
console.log(`fuzz: seed ${report.seed}, ${report.sent} messages in ${seconds} s`);
console.log(`  crashes:                    ${report.crashes}`);
console.log(`  unanswered by deadline:     ${report.unanswered.length}`);
console.log(`  uncoded answers:            ${report.uncoded.length}`);
console.log(`  records failing the schema: ${report.badRecords.length} of ${report.records}`);
console.log(`  no responders (unserved):   ${report.noResponders}`);
console.log(`  coordinator allocator:      ${report.allocator ?? "unknown"}`);
console.log(
  `  coordinator RSS MiB:        before ${report.rssMiB.before}, peak ${report.rssMiB.peak}, after ${report.rssMiB.after}`,
);
const memory = report.memory;
if (memory !== undefined) {
  console.log(
    `  coordinator heapUsed MiB:   after GC before ${memory.before.heapUsedMiB}, peak ${memory.peak.heapUsedMiB}, after GC ${memory.after.heapUsedMiB}`,
  );
  console.log(
    `  coordinator external MiB:   before ${memory.before.externalMiB}, peak ${memory.peak.externalMiB}, after GC ${memory.after.externalMiB} (arrayBuffers after ${memory.after.arrayBuffersMiB})`,
  );
  if (memory.rounds.length > 1)
    console.log(
      `  after each round (RSS/heapUsed/heapTotal/external MiB): ${memory.rounds.map((m) => `${m.rssMiB}/${m.heapUsedMiB}/${m.heapTotalMiB}/${m.externalMiB}`).join(", ")}`,
    );
}
if (memory !== undefined)
  console.log(
    `  coordinator heapTotal MiB:  before ${memory.before.heapTotalMiB}, peak ${memory.peak.heapTotalMiB}, after GC ${memory.after.heapTotalMiB}`,
  );
const tally = (list: { kind: string; path: string }[]) =>
  Object.entries(
    list.reduce<Record<string, number>>((acc, x) => {
      const key = `${x.path}/${x.kind}`;
      acc[key] = (acc[key] ?? 0) + 1;
      return acc;
    }, {}),
  )
    .map(([k, n]) => `${k}: ${n}`)
    .join(", ");
if (report.unanswered.length > 0) {
  console.log(`  unanswered by kind: ${tally(report.unanswered)}`);
  const t0 = report.unanswered[0]!.at;
  console.log(
    `  unanswered (index@ms after the first): ${report.unanswered.map((u) => `${u.n}@${u.at - t0}`).join(", ")}`,
  );
}
if (report.uncoded.length > 0) {
  console.log(`  uncoded by kind: ${tally(report.uncoded)}`);
  console.log(`  first uncoded: ${JSON.stringify(report.uncoded[0])}`);
}
if (report.badRecords.length > 0)
  console.log(`  first bad record: ${JSON.stringify(report.badRecords[0])}`);
const verify = report.verify;
if (verify !== undefined) {
  console.log(
    `  audit verify (sealed, signed): exit ${verify.exitCode}, ${verify.findings.length} findings on ${verify.records} records (${verify.sealed} sealed, ${verify.signedRecords} signed, ${verify.pendingSignatures} pending)`,
  );
  // The fuzzer never writes to the log subjects itself: every finding is a false alarm.
  for (const f of verify.findings.slice(0, 5)) console.log(`    false alarm: ${JSON.stringify(f)}`);
}
const failed =
  report.crashes +
  report.unanswered.length +
  report.uncoded.length +
  report.badRecords.length +
  (verify?.findings.length ?? 0) +
  (verify === undefined || verify.exitCode === 0 ? 0 : 1);
process.exitCode = failed === 0 ? 0 : 1;
