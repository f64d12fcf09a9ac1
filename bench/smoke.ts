/**
 * `npm run bench:smoke`: `npm run bench` in a small configuration (a few hundred calls per side,
 * on its own private nats-server, every part of the run included), for CI. It fails when the
 * bench crashes, hangs past a generous deadline, or does not end with a well-formed `bench:` line
 * (bench/support/bench-line.ts); never on a time or a ratio, which on a shared CI machine say
 * more about the neighbours than about the build.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { benchOutputProblem } from "./support/bench-line.js";

/** Small enough for CI, large enough that every measurement has samples (each part runs). */
const SMOKE_ENV = {
  BENCH_ROUNDS: "1",
  BENCH_SEQUENTIAL: "100",
  BENCH_CONCURRENT_CALLS: "200",
  BENCH_SIGN_ROUNDS: "2",
  BENCH_REPLAY_RECORDS: "1000",
};

/** A hang, not a slow run: the smoke takes well under a minute on a loaded 2-core machine. */
const DEADLINE_MS = Number(process.env.BENCH_SMOKE_DEADLINE_MS ?? 5 * 60_000);

interface BenchRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  timedOut: boolean;
}

/** Run bench/bench (compiled or under tsx, as this file runs), echoing its output. */
function runBench(): Promise<BenchRun> {
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const script = fileURLToPath(new URL(`./bench.${extension}`, import.meta.url));
  // The caller's BENCH_* settings win (BENCH_PROCESSES=0 skips the role-per-process part).
  const env = { ...SMOKE_ENV, ...process.env };
  // A process group of its own, so a hang is ended with its nats-server and role processes.
  const child = spawn(process.execPath, [...process.execArgv, script], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
    detached: true,
  });
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    process.stdout.write(chunk);
    stdout = (stdout + chunk.toString()).slice(-100_000);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  }, DEADLINE_MS);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, timedOut });
    });
  });
}

/** What is wrong with a run, or undefined when it ended well with a well-formed line. */
function smokeProblem(run: BenchRun): string | undefined {
  if (run.timedOut) return `the bench did not finish within ${DEADLINE_MS / 1000} s (a hang?)`;
  if (run.code !== 0)
    return `the bench exited with ${run.signal === null ? `code ${run.code}` : run.signal}`;
  return benchOutputProblem(run.stdout);
}

const t0 = performance.now();
const problem = smokeProblem(await runBench());
const seconds = ((performance.now() - t0) / 1000).toFixed(0);
if (problem === undefined) {
  console.log(`bench smoke: ok in ${seconds} s (form checked, not figures)`);
} else {
  console.error(`bench smoke FAILED after ${seconds} s: ${problem}`);
  console.error("run `npm run bench:smoke` locally; the bench's own output is above");
  process.exitCode = 1;
}
