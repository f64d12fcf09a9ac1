/**
 * The replay benchmark (bench/replay.ts) in a small configuration, as a child process with its own
 * nats-server, so `npm run bench` can report `replay_rps` without the call benchmark's state.
 * The child runs the way this process runs: compiled, or under the same TypeScript loader.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Records per second of `bench/replay.ts` with `records` records (its last line). */
export async function measureReplay(records: number): Promise<number> {
  const extension = import.meta.url.endsWith(".ts") ? "ts" : "js";
  const script = fileURLToPath(new URL(`../replay.${extension}`, import.meta.url));
  const { stdout } = await run(process.execPath, [...process.execArgv, script], {
    env: { ...process.env, BENCH_REPLAY_RECORDS: String(records) },
    timeout: 10 * 60_000,
    maxBuffer: 1024 * 1024,
  });
  const rps = Number(/records_per_second=(\d+)/.exec(stdout)?.[1]);
  if (!Number.isFinite(rps))
    throw new Error(`bench/replay printed no records_per_second:\n${stdout}`);
  return rps;
}
