/**
 * The fuzz suite's coordinator: `hookbus coordinator` as its own process (a crash is an exit, its
 * memory is its own), started with `--expose-gc` and the debug-only memory probe
 * (memory-probe.mjs) on an IPC channel, so the report can read heapUsed after a forced GC and
 * external memory besides RSS. Nothing of this is in the service: only this test harness loads it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { allocatorOf } from "../support/allocator.js";

const cli = fileURLToPath(new URL("../../bin/hookbus.js", import.meta.url));
const probe = new URL("./memory-probe.mjs", import.meta.url).href;

/** MiB with one decimal. */
export const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

export interface MemoryFigures {
  rssMiB: number;
  heapUsedMiB: number;
  /** V8's committed heap: what it holds from the OS for objects, used or not. */
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
}

export interface ProbedCoordinator {
  child: ChildProcess;
  exited: Promise<number | null>;
  /** RSS from /proc (no round trip: cheap enough to sample every 100 ms). */
  rssMiB: () => number;
  /** "jemalloc" when the process runs on it, else "glibc malloc". */
  allocator: () => string;
  /** process.memoryUsage() as is. */
  sample: (timeoutMs?: number) => Promise<MemoryFigures>;
  /** process.memoryUsage() after two forced full collections. */
  settled: (timeoutMs?: number) => Promise<MemoryFigures>;
}

export function startProbedCoordinator(
  args: string[],
  env: Record<string, string> = {},
): ProbedCoordinator {
  const child = spawn(
    process.execPath,
    ["--expose-gc", "--import", probe, cli, "coordinator", ...args],
    {
      env: { ...process.env, HOOKBUS_CLI_SOURCE: "1", ...env },
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    },
  );
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => resolve(code)),
  );
  let nextId = 0;
  const ask = (probeKind: "sample" | "settled", timeoutMs = 10_000) =>
    new Promise<MemoryFigures>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => {
        child.off("message", onMessage);
        reject(new Error(`the coordinator's memory probe did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      const onMessage = (message: unknown) => {
        const m = message as { probe?: string; id?: number; memory?: NodeJS.MemoryUsage };
        if (m.id !== id || m.memory === undefined) return;
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve({
          rssMiB: mib(m.memory.rss),
          heapUsedMiB: mib(m.memory.heapUsed),
          heapTotalMiB: mib(m.memory.heapTotal),
          externalMiB: mib(m.memory.external),
          arrayBuffersMiB: mib(m.memory.arrayBuffers),
        });
      };
      child.on("message", onMessage);
      child.send({ probe: probeKind, id });
    });
  return {
    child,
    exited,
    allocator: () => allocatorOf(child.pid ?? -1),
    rssMiB: () => {
      const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
      return mib(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024);
    },
    sample: (timeoutMs) => ask("sample", timeoutMs),
    settled: (timeoutMs) => ask("settled", timeoutMs),
  };
}
