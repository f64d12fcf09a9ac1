/**
 * `npm run bench`'s `stream:` line: bench/stream.ts (the guarded streamed answer against the
 * unguarded one, issue 34) run as a child with fewer runs, its last line returned as printed.
 * BENCH_STREAM_RUNS sets the runs per way (default 7; `npm run bench:stream` alone runs 15).
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function measureStream(): Promise<string> {
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const script = fileURLToPath(new URL(`../stream.${extension}`, import.meta.url));
  const { stdout } = await run(process.execPath, [...process.execArgv, script], {
    env: { ...process.env, RUNS: process.env.BENCH_STREAM_RUNS ?? "7" },
    timeout: 10 * 60_000,
    maxBuffer: 1024 * 1024,
  });
  const line = stdout
    .trim()
    .split("\n")
    .findLast((l) => l.startsWith("stream:"));
  if (line === undefined) throw new Error(`bench/stream printed no stream: line:\n${stdout}`);
  return line;
}
