/**
 * `npx tsx bench/library-cost.ts [dir]`: what a fresh before_tool_call costs under the shipped
 * library (policies/library, or the .cedar files of `dir`), in process: every set of the library
 * evaluated on a shell call never seen before (so no remembered answer), facts computed once per
 * call as the coordinator does when none are handed in. Prints p50 and p99 in µs per call.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { emptySessionFacts, evaluateCedar, parseCedarPolicySet } from "../src/cedar/index.js";

const DIR = process.argv[2] ?? "policies/library";
const CALLS = Number(process.env.BENCH_CALLS ?? 3000);
const COMMANDS = [
  "git status",
  "npm test -- --run src/a.test.ts",
  "rm -rf ./dist && npm run build",
  "curl -s https://api.github.com/repos/o/r | jq .stargazers_count",
  "grep -rn TODO src | head -20",
];

const sets = readdirSync(DIR)
  .filter((f) => f.endsWith(".cedar"))
  .map((f) => parseCedarPolicySet(readFileSync(join(DIR, f), "utf8"), f));

function call(n: number) {
  const command = `${COMMANDS[n % COMMANDS.length]!} # ${n}`;
  return {
    hook: "before_tool_call" as const,
    context: { agentId: "bench", sessionKey: "s", runId: "r" },
    event: { toolName: "Bash", toolCallId: `t${n}`, params: { command } },
    session: emptySessionFacts(),
  };
}

for (let n = 0; n < 300; n++) for (const set of sets) evaluateCedar(set, call(-n - 1));
const times: number[] = [];
for (let n = 0; n < CALLS; n++) {
  const input = call(n);
  const t0 = performance.now();
  for (const set of sets) evaluateCedar(set, input);
  times.push((performance.now() - t0) * 1000);
}
times.sort((a, b) => a - b);
const at = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
console.log(
  `library-cost: dir=${DIR} sets=${sets.length} p50_us=${at(0.5).toFixed(1)} p99_us=${at(0.99).toFixed(1)}`,
);
