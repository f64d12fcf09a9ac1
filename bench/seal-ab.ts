/**
 * `npm run bench:seal-ab [-- REV]`: the record sealing of this tree against that of git revision
 * REV (default HEAD), in one process: src/privacy/record-cipher.ts and fields.ts of REV are copied
 * to .tmp/seal-ab/ and loaded beside this tree's, and both seal fresh copies of the same record
 * in interleaved rounds, the order alternating. The record is a benchmark call's decision as a
 * plain coordinator stores it (facts included), from a decision path started for it. Prints old,
 * new and the median of the rounds' new/old: a change to the sealing path is claimed with it.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { sealRecord } from "../src/privacy/index.js";
import { median } from "./support/bracketed-cost.js";
import {
  benchSealing,
  plainBenchRecord,
  recordCopies,
  sealCpuUs,
  type Seal,
} from "./support/seal-work.js";

const ROUNDS = Number(process.env.BENCH_SEAL_AB_ROUNDS ?? 20);
const PER_ROUND = 10_000;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** REV's sealing, loaded from copies whose imports point back into this tree (but fields.ts). */
async function sealOf(rev: string): Promise<Seal> {
  const dir = join(root, ".tmp", "seal-ab", rev.replace(/[^\w.-]/g, "_"));
  mkdirSync(dir, { recursive: true });
  for (const name of ["record-cipher.ts", "fields.ts"]) {
    const text = execFileSync("git", ["show", `${rev}:src/privacy/${name}`], { cwd: root });
    const rewritten = text
      .toString("utf8")
      .replace(/from "(\.{1,2}\/[^"]+)"/g, (whole, spec: string) => {
        if (spec === "./fields.js") return whole;
        const target = resolve(root, "src", "privacy", spec);
        return `from "${relative(dir, target).replaceAll("\\", "/")}"`;
      });
    writeFileSync(join(dir, name), rewritten);
  }
  const module = (await import(pathToFileURL(join(dir, "record-cipher.ts")).href)) as {
    sealRecord: Seal;
  };
  return module.sealRecord;
}

function cpuPerSeal(seal: Seal, text: string): number {
  return sealCpuUs(seal, recordCopies(text, PER_ROUND), benchSealing()) / PER_ROUND;
}

const rev = process.argv[2] ?? "HEAD";
const old = await sealOf(rev);
const text = JSON.stringify(await plainBenchRecord());
cpuPerSeal(old, text);
cpuPerSeal(sealRecord, text);
const olds: number[] = [];
const news: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  if (round % 2 === 0) {
    olds.push(cpuPerSeal(old, text));
    news.push(cpuPerSeal(sealRecord, text));
  } else {
    news.push(cpuPerSeal(sealRecord, text));
    olds.push(cpuPerSeal(old, text));
  }
}
const ratios = news.map((n, i) => n / olds[i]!);
const f = (n: number) => n.toFixed(2);
console.log(
  `seal-ab: ${rev} ${f(median(olds))} µs, this tree ${f(median(news))} µs per record (${text.length} B, fresh copies, ${ROUNDS} rounds of ${PER_ROUND} each, order alternating); median new/old ${f(median(ratios))} (rounds: ${ratios.map(f).join(", ")})`,
);
