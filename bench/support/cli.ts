/**
 * Starting hookbus roles as their own processes through the CLI, as an operator would. The one
 * place that knows how the CLI is launched (the package may move it to compiled dist/ later).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const CLI = fileURLToPath(new URL("../../bin/hookbus.js", import.meta.url));

export interface RoleProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
  output(): string;
}

/** `hookbus <args>` as a child process with `env` added; output kept (the last 1 MB). */
export function startCli(args: string[], env: Record<string, string> = {}): RoleProcess {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-1_000_000));
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
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
