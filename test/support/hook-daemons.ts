/**
 * The Claude Code hook daemons a test or benchmark started, found by their logs: each runtime
 * folder holds `cc-<hash>.log`, and every line pino writes carries the daemon's pid.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The pids of the daemons that started listening in `dir`, oldest first. */
export function hookDaemonPids(dir: string): number[] {
  if (!existsSync(dir)) return [];
  const pids = new Set<number>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".log")))
    for (const line of readFileSync(join(dir, file), "utf8").split("\n"))
      if (line.includes("daemon listening")) pids.add((JSON.parse(line) as { pid: number }).pid);
  return [...pids];
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false; // ESRCH: gone
  }
}

/** SIGTERM to every daemon of `dir` still running (each drains and removes its socket). */
export function stopHookDaemons(dir: string): void {
  for (const pid of hookDaemonPids(dir)) if (isAlive(pid)) process.kill(pid, "SIGTERM");
}
