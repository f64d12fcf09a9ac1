/**
 * Starting hookbus roles as their own processes through the CLI, as an operator would. The one
 * place that knows how the CLI is launched (the package may move it to compiled dist/ later).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Compiled (`npm run bench` runs .tmp/bench, where this file is .js), the CLI's `main` compiled
 * beside it; from source (tsx), bin/hookbus.js, which runs dist/.
 */
const COMPILED = import.meta.url.endsWith(".js");
const CLI = fileURLToPath(
  new URL(COMPILED ? "./hookbus-main.js" : "../../bin/hookbus.js", import.meta.url),
);

export interface RoleProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
  output(): string;
}

/**
 * `hookbus <args>` as a child process with `env` added; output kept (the last 1 MB) and, with
 * `logFile`, all of it appended to that file (stdout and stderr interleaved as they arrive), so a
 * failed run can be diagnosed afterwards.
 */
export function startCli(
  args: string[],
  env: Record<string, string> = {},
  logFile?: string,
): RoleProcess {
  return startNode(CLI, args, env, logFile);
}

/** A module run by this Node binary as a child process, as `startCli` runs the CLI. */
export function startNode(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  logFile?: string,
): RoleProcess {
  // A TypeScript module (`npm run bench:source`, under tsx) runs with this process's loader.
  const loader = script.endsWith(".ts") ? process.execArgv : [];
  const child = spawn(process.execPath, [...loader, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const file = logFile === undefined ? undefined : createWriteStream(logFile, { flags: "a" });
  let out = "";
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-1_000_000);
    file?.write(d);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once("close", (code, signal) => {
      // "close" (not "exit"): both pipes are read to the end before the file is closed.
      if (file === undefined) return resolve(code);
      file.end(`--- exited: code ${String(code)} signal ${String(signal)}\n`, () => resolve(code));
    }),
  );
  return { child, pid: child.pid ?? -1, exited, output: () => out };
}

/** Resident set size of a process in MiB (Linux /proc), or undefined when it is gone. */
export async function rssMiB(pid: number): Promise<number | undefined> {
  const { readFile } = await import("node:fs/promises");
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    return Number.isFinite(kb) ? Math.round((kb / 1024) * 10) / 10 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU time (user + system) a process has used, in µs (Linux /proc; USER_HZ is 100 on every Linux
 * Node runs on, so the resolution is 10 ms), or undefined when it is gone or there is no /proc.
 */
export async function cpuUs(pid: number): Promise<number | undefined> {
  const { readFile } = await import("node:fs/promises");
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is the first, utime the 12th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * 10_000 : undefined;
  } catch {
    return undefined;
  }
}
