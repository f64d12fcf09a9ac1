/**
 * The worker under test, as processes: started from the user's command with the private setup's
 * NATS_URL and namespace in the environment, stopped by signal, their output kept (bounded) for
 * the report.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { settlesWithin } from "../foundation/deadline.js";

const OUTPUT_LIMIT = 16 * 1024;

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** The last OUTPUT_LIMIT characters of stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  readonly exited: Promise<number | string>;
  signal(signal: NodeJS.Signals): void;
}

export function startWorkerProcess(
  command: readonly string[],
  env: Record<string, string>,
): WorkerProcess {
  const [file, ...args] = command;
  if (file === undefined) throw new Error("no worker command");
  const child = spawn(file, args, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString("utf8")).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | string>((resolve) => {
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "unknown"));
    child.once("error", (error) => {
      output += `\n${String(error)}`;
      resolve("spawn-error");
    });
  });
  return {
    child,
    output: () => output,
    exited,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
  };
}

/** Waits for the exit at most `ms`; undefined when it did not exit in time. */
export async function exitWithin(
  worker: WorkerProcess,
  ms: number,
): Promise<number | string | undefined> {
  return (await settlesWithin(worker.exited, ms)) ? await worker.exited : undefined;
}
