/**
 * V8 heap snapshots (.heapsnapshot, as `--heapsnapshot-signal` writes them) summarized by
 * constructor: how many objects and how many bytes of their own (self size) each holds, and what
 * grew between two snapshots of one process. Pure: reading and taking snapshots is elsewhere.
 */

/** The parts of the .heapsnapshot format this reads. */
export interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: unknown[] } };
  nodes: number[];
  strings: string[];
}

export interface ConstructorTotal {
  count: number;
  selfBytes: number;
}

/** By constructor: objects and native objects by their name, other kinds as "(type)". */
export type HeapSummary = Map<string, ConstructorTotal>;

/** The key DevTools' summary view groups a node under. */
function constructorKey(type: string, name: string): string {
  return type === "object" || type === "native" ? name : `(${type})`;
}

export function summarizeHeapSnapshot(heap: HeapSnapshot): HeapSummary {
  const fields = heap.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf("type");
  const nameAt = fields.indexOf("name");
  const sizeAt = fields.indexOf("self_size");
  const types = heap.snapshot.meta.node_types[typeAt] as string[];
  const summary: HeapSummary = new Map();
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt]!] ?? "unknown";
    const key = constructorKey(type, heap.strings[heap.nodes[i + nameAt]!] ?? "");
    const total = summary.get(key) ?? { count: 0, selfBytes: 0 };
    total.count += 1;
    total.selfBytes += heap.nodes[i + sizeAt]!;
    summary.set(key, total);
  }
  return summary;
}

export function totalSelfBytes(summary: HeapSummary): number {
  let bytes = 0;
  for (const { selfBytes } of summary.values()) bytes += selfBytes;
  return bytes;
}

export interface ConstructorGrowth {
  key: string;
  countDelta: number;
  selfBytesDelta: number;
  selfBytesAfter: number;
}

/** Every constructor's change from `before` to `after`, the largest growth in bytes first. */
export function heapGrowth(before: HeapSummary, after: HeapSummary): ConstructorGrowth[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  const none = { count: 0, selfBytes: 0 };
  return [...keys]
    .map((key) => {
      const b = before.get(key) ?? none;
      const a = after.get(key) ?? none;
      return {
        key,
        countDelta: a.count - b.count,
        selfBytesDelta: a.selfBytes - b.selfBytes,
        selfBytesAfter: a.selfBytes,
      };
    })
    .sort((x, y) => y.selfBytesDelta - x.selfBytesDelta);
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
const signed = (n: number, text: string) => (n >= 0 ? `+${text}` : text);

/** The `top` constructors that grew most (none when nothing grew), under a line of totals. */
export function formatHeapGrowth(before: HeapSummary, after: HeapSummary, top: number): string {
  const total = totalSelfBytes(after) - totalSelfBytes(before);
  const rows = heapGrowth(before, after)
    .filter((g) => g.selfBytesDelta > 0)
    .slice(0, top)
    .map(
      (g) =>
        `  ${signed(g.selfBytesDelta, mib(g.selfBytesDelta)).padStart(9)} MiB  ` +
        `${signed(g.countDelta, String(g.countDelta)).padStart(9)} objects  ` +
        `(${mib(g.selfBytesAfter)} MiB now)  ${g.key}`,
    );
  return [
    `heap snapshot self size: ${mib(totalSelfBytes(before))} -> ${mib(totalSelfBytes(after))} MiB ` +
      `(${signed(total, mib(total))} MiB); grown most, by self size:`,
    ...rows,
  ].join("\n");
}
