/**
 * `npx tsx bench/path-facts-ab.ts OLD NEW`: CPU per path of `pathFacts` (src/facts/path.ts) in
 * two compiled builds side by side, e.g. main's and a branch's `.tmp/bench` copied aside
 * (`tsc -p tsconfig.bench.json`), in interleaved rounds in one process so the machine's load
 * falls on both alike. Everyday paths of a project and a few sensitive ones; prints the medians
 * and their ratio (issue 35: the sensitive labels were the largest single cost of the facts).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

type PathFacts = (text: string, options: { cwd: string; projectRoot: string }) => unknown;

const PATHS = [
  "src/index.ts",
  "/work/project/package.json",
  "~/.ssh/id_rsa",
  "/etc/passwd",
  "./dist",
  "node_modules",
  "/home/dev/project/../.aws/credentials",
  "README.md",
  "/tmp/build.log",
  "~/.bashrc",
  "test/unit/a.test.ts",
  "/usr/local/bin/node",
  ".env",
  ".env.example",
  "/var/log/syslog",
  "docs/facts.md",
];
const REPEAT = 20_000;
const ROUNDS = 8;
const where = { cwd: "/work/project", projectRoot: "/work/project" };

async function load(build: string): Promise<PathFacts> {
  const url = pathToFileURL(resolve(build, "src/facts/path.js")).href;
  return ((await import(url)) as { pathFacts: PathFacts }).pathFacts;
}

/** CPU µs per path over one round. */
function round(pathFacts: PathFacts): number {
  const start = process.cpuUsage();
  for (let i = 0; i < REPEAT; i++) for (const path of PATHS) pathFacts(path, where);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / (REPEAT * PATHS.length);
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1]!;
}

const [oldBuild, newBuild] = process.argv.slice(2);
if (oldBuild === undefined || newBuild === undefined)
  throw new Error("usage: npx tsx bench/path-facts-ab.ts OLD_BUILD_DIR NEW_BUILD_DIR");
const [before, after] = [await load(oldBuild), await load(newBuild)];
// Warm up both.
for (let i = 0; i < 3; i++) {
  round(before);
  round(after);
}
const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  a.push(round(before));
  b.push(round(after));
}
console.log(
  `path-facts: old_us=${median(a).toFixed(3)} new_us=${median(b).toFixed(3)} ratio=${(median(b) / median(a)).toFixed(2)} (${ROUNDS} interleaved rounds of ${REPEAT * PATHS.length} paths, medians)`,
);
