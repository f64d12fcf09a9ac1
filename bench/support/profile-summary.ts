/**
 * Self time of a V8 CPU profile, grouped by area (a hookbus source folder, a dependency, Node's
 * internals, GC) and by function, as text. Idle time is left out of the shares.
 */
export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** "src/coordinator", "@nats-io/nats-core", "node:internal/streams", "(garbage collector)". */
export function areaOf(url: string, functionName: string): string {
  if (url === "") return functionName.startsWith("(") ? functionName : "(native)";
  const dependency = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dependency) return dependency[1]!;
  // The compiled tree is .tmp/bench/{src,bench}/…: the last src/ or bench/ names the folder.
  const own = /\/(src|bench)\/([^/]+)\/[^/]*$/.exec(url) ?? /\/(src|bench)\/[^/]+$/.exec(url);
  if (own) return own[2] === undefined ? own[1]! : `${own[1]}/${own[2]}`;
  const internal = /^node:(internal\/[^/]+|[^/]+)/.exec(url);
  if (internal) return `node:${internal[1]}`;
  return url;
}

export function summarizeProfile(profile: CpuProfile, top: number): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === "(idle)") continue;
    total += us;
    const area = areaOf(url, functionName);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const file = url.split("/").slice(-2).join("/");
    const key = `${functionName || "(anonymous)"}  ${file}:${lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const rows = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `${((100 * us) / total).toFixed(1).padStart(5)} %  ${k}`)
      .join("\n");
  return `busy ${(total / 1000).toFixed(0)} ms of samples\n\nby area:\n${rows(areas, 30)}\n\nby function (self):\n${rows(functions, top)}`;
}

export interface HeapProfileNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapProfileNode[];
}

export interface HeapProfile {
  head: HeapProfileNode;
}

/** Sampled allocation by allocating function (self), as text. */
export function summarizeHeapProfile(profile: HeapProfile, top: number): string {
  const functions = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapProfileNode) => {
    const { functionName, url, lineNumber } = node.callFrame;
    if (node.selfSize > 0) {
      const file = url.split("/").slice(-2).join("/");
      const key = `${functionName || "(anonymous)"}  ${file}:${lineNumber + 1}`;
      functions.set(key, (functions.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const rows = [...functions]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, bytes]) => `${((100 * bytes) / total).toFixed(1).padStart(5)} %  ${k}`)
    .join("\n");
  return `\nallocation sampled by function (self):\n${rows}`;
}
