/**
 * Child processes in tests (workers, the CLI): stdout/stderr collected, the exit code as a promise.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface Child {
  child: ChildProcess;
  exited: Promise<number | null>;
  output: () => string;
  errors: () => string;
}

/** `node <args>` with `env` added to this process's environment. */
export function startChild(args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  return { child, exited, output: () => out, errors: () => err };
}
