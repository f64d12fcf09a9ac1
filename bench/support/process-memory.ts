/**
 * Reading a service process's memory from the outside, as an operator can: RSS from /proc, V8's
 * heap and Node's external memory from its Prometheus endpoint (`--http`, prom-client's default
 * metrics), and heap snapshots through `--heapsnapshot-signal`.
 */
import { open, readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import type { HeapSnapshot } from "./heap-snapshot.js";

export interface HeapFigures {
  heapUsedMiB: number;
  /** What V8 holds from the OS for its heap, used or not. */
  heapTotalMiB: number;
  externalMiB: number;
}

const toMiB = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

/** One gauge's value from Prometheus text, whatever its labels. */
function gauge(text: string, name: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
  const value = Number(line?.split(" ").at(-1));
  return Number.isFinite(value) ? value : undefined;
}

/** V8's heap and Node's external memory from a service's /metrics; undefined when it does not answer. */
export async function scrapeHeap(
  metricsUrl: string,
  timeoutMs = 2_000,
): Promise<HeapFigures | undefined> {
  try {
    const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    const used = gauge(text, "hookbus_nodejs_heap_size_used_bytes");
    const total = gauge(text, "hookbus_nodejs_heap_size_total_bytes");
    const external = gauge(text, "hookbus_nodejs_external_memory_bytes");
    if (used === undefined || total === undefined || external === undefined) return undefined;
    return { heapUsedMiB: toMiB(used), heapTotalMiB: toMiB(total), externalMiB: toMiB(external) };
  } catch {
    return undefined;
  }
}

/** NODE_OPTIONS for a child that writes a heap snapshot into `dir` on SIGUSR2. */
export function heapSnapshotNodeOptions(dir: string): string {
  const inherited = process.env.NODE_OPTIONS ?? "";
  return `${inherited} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${dir}`.trim();
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function snapshotFiles(dir: string): Promise<Set<string>> {
  const names = await readdir(dir);
  return new Set(names.filter((n) => n.endsWith(".heapsnapshot")));
}

/** The file ends as a whole snapshot does ("…]}") and has stopped growing. */
async function complete(file: string, lastSize: number): Promise<{ done: boolean; size: number }> {
  const { size } = await stat(file);
  if (size === 0 || size !== lastSize) return { done: false, size };
  const handle = await open(file);
  try {
    const tail = Buffer.alloc(Math.min(64, size));
    await handle.read(tail, 0, tail.length, size - tail.length);
    return { done: /\]\s*\}\s*$/.test(tail.toString("utf8")), size };
  } finally {
    await handle.close();
  }
}

/**
 * Signal `pid` to write a heap snapshot into `dir` (started with heapSnapshotNodeOptions) and
 * return the file once it is whole; throws when that takes longer than `timeoutMs`.
 */
export async function takeHeapSnapshot(
  pid: number,
  dir: string,
  timeoutMs: number,
): Promise<string> {
  const before = await snapshotFiles(dir);
  const deadline = Date.now() + timeoutMs;
  process.kill(pid, "SIGUSR2");
  let file: string | undefined;
  let size = -1;
  while (Date.now() < deadline) {
    await delay(500);
    file ??= [...(await snapshotFiles(dir))].find((n) => !before.has(n));
    if (file === undefined) continue;
    const check = await complete(join(dir, file), size);
    if (check.done) return join(dir, file);
    size = check.size;
  }
  throw new Error(`no complete heap snapshot from process ${pid} in ${dir} within ${timeoutMs} ms`);
}

export async function readHeapSnapshot(file: string): Promise<HeapSnapshot> {
  return JSON.parse(await readFile(file, "utf8")) as HeapSnapshot;
}
