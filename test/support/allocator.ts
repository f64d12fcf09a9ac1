/**
 * Running a hookbus process on jemalloc, as docs/operations.md ("Memory") recommends, for the
 * benchmarks and the fuzz suite that compare allocators.
 */
import { existsSync, readFileSync } from "node:fs";

/** Where Debian's libjemalloc2 puts the library (docs/operations.md, "Memory"). */
const JEMALLOC_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
  "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
  "/usr/lib/libjemalloc.so.2",
];

/**
 * The environment that runs a service on jemalloc, as docs/operations.md recommends: freed
 * memory goes back to the OS within about a second (glibc malloc keeps a fragmented high-water).
 */
export function jemallocEnv(): Record<string, string> {
  const path = JEMALLOC_PATHS.find((p) => existsSync(p));
  if (path === undefined) {
    throw new Error(
      `jemalloc not found (looked in ${JEMALLOC_PATHS.join(", ")}): apt-get install libjemalloc2`,
    );
  }
  return {
    LD_PRELOAD: path,
    MALLOC_CONF: "background_thread:true,dirty_decay_ms:0,muzzy_decay_ms:0",
  };
}

/** "jemalloc" when the process runs on it (its maps name the library), else "glibc malloc". */
export function allocatorOf(pid: number): string {
  return readFileSync(`/proc/${pid}/maps`, "utf8").includes("libjemalloc")
    ? "jemalloc"
    : "glibc malloc";
}
