/**
 * The benchmark's role-per-process line: hookbus's coordinator and three policy workers each a
 * `hookbus worker` / `hookbus coordinator` process started through the CLI, as production runs
 * them, and the baseline's coordinator and three responders each a process of
 * bench/baseline-role.ts; the agent (HookbusClient) and the baseline's caller stay in this
 * process. Same call, event and concurrency as the in-process measurement, rounds interleaved
 * (baseline, hookbus, baseline, hookbus…) so a neighbour's load hits both sides.
 */
import { fileURLToPath } from "node:url";
import { HookbusClient } from "../../src/agent/index.js";
import { Subjects } from "../../src/bus/subjects.js";
import { RegistryStore } from "../../src/registry/store.js";
import { BASELINE_POLICIES, baselineCaller, type BaselineNames } from "../baseline.js";
import { ChildGroup } from "./children.js";
import { cpuUs, startCli, startNode, type RoleProcess } from "./cli.js";
import {
  BENCH_EVENT,
  concurrent,
  laneCall,
  laneContext,
  type BenchConnections,
} from "./decision-path.js";

/** How long the children get to start (eight Node processes on a possibly busy machine). */
const START_DEADLINE_MS = 60_000;

/** Run from the TypeScript sources (`npm run bench:source`, tsx) rather than compiled. */
const FROM_SOURCE = import.meta.url.endsWith(".ts");

/** A file beside this one, compiled or not: `.js` under .tmp/bench, `.ts` under tsx. */
function sibling(relative: string): string {
  return fileURLToPath(new URL(`${relative}${FROM_SOURCE ? ".ts" : ".js"}`, import.meta.url));
}

export interface ProcessShapeOptions {
  url: string;
  conns: BenchConnections;
  namespace: string;
  rounds: number;
  sequentialPerRound: number;
  concurrentCalls: number;
  concurrency: number;
  /** How the in-process measurement runs its sequential calls (the same code for both lines). */
  sequential: (call: () => Promise<unknown>, n: number, into: number[]) => Promise<void>;
}

export interface ProcessSide {
  latencies: number[];
  throughputs: number[];
  /**
   * Node CPU per call at concurrency (Linux /proc, 10 ms ticks; undefined without /proc): all
   * the side's processes together, and each one (this process, the caller, counts for both sides
   * alike: only the side being measured is called meanwhile).
   */
  cpuUsPerCall: CpuPerCall | undefined;
}

export interface CpuPerCall {
  total: number;
  caller: number;
  coordinator: number;
  /** One per worker (responder, for the baseline), p1 to p3. */
  workers: number[];
}

export interface ProcessShapeResult {
  baseline: ProcessSide;
  hookbus: ProcessSide;
}

/** Start both sides' children, measure, and stop the children whatever happens. */
export async function measureProcessShape(opts: ProcessShapeOptions): Promise<ProcessShapeResult> {
  const children = new ChildGroup();
  try {
    const calls = await startSides(opts, children, Date.now() + START_DEADLINE_MS);
    try {
      return await measure(opts, calls);
    } finally {
      await calls.close();
    }
  } finally {
    await children.close();
  }
}

interface SideCalls {
  baseline: (lane: number) => Promise<unknown>;
  hookbus: (lane: number) => Promise<unknown>;
  pids: { baseline: number[]; hookbus: number[] };
  close(): Promise<void>;
}

async function startSides(
  opts: ProcessShapeOptions,
  children: ChildGroup,
  deadline: number,
): Promise<SideCalls> {
  const { url, namespace } = opts;
  // From source, the CLI runs the sources too (bin/hookbus.js would run dist/, maybe stale).
  const env = { NATS_URL: url, ...(FROM_SOURCE ? { HOOKBUS_CLI_SOURCE: "1" } : {}) };
  const names: BaselineNames = { prefix: `bench.${namespace}`, stream: `BENCH_${namespace}` };
  const agent = await opts.conns.open("agent (processes)");
  // The registry first, so the coordinator starts with it.
  const registry = await RegistryStore.open(agent, new Subjects(namespace));
  await registry.apply({
    policies: BASELINE_POLICIES.map((name, i) => ({
      name,
      hooks: ["before_tool_call"],
      priority: 30 - i * 10,
    })),
  });
  const started = [
    ...startHookbusRoles(children, namespace, env),
    ...startBaselineRoles(children, names, env),
  ];
  await Promise.all(started.map(({ role, ready }) => children.ready(role, ready, deadline)));
  const pids = started.map(({ role }) => role.pid);

  const client = await HookbusClient.connect({ nc: agent, namespace });
  await allowedBefore(deadline, () => client.beforeToolCall(laneContext(0), BENCH_EVENT));
  const contexts = Array.from({ length: opts.concurrency }, (_, lane) => laneContext(lane));
  const call = baselineCaller(agent, names);
  return {
    hookbus: laneCall(client, opts.concurrency),
    baseline: (lane) =>
      call({ hook: "before_tool_call", context: contexts[lane]!, event: BENCH_EVENT }),
    pids: { hookbus: pids.slice(0, 4), baseline: pids.slice(4) },
    close: () => client.close(),
  };
}

/** A child and the line that says it serves. */
interface Starting {
  role: RoleProcess;
  ready: RegExp;
}

/** hookbus's coordinator, then its workers p1 to p3, through the CLI. */
function startHookbusRoles(
  children: ChildGroup,
  namespace: string,
  env: Record<string, string>,
): Starting[] {
  const cli = (name: string, args: string[]) =>
    children.add(
      name,
      startCli(
        [...args, "--namespace", namespace, "--log-level", "info", "--connect-wait", "0"],
        env,
      ),
    );
  return [
    { role: cli("hookbus coordinator", ["coordinator"]), ready: /"coordinator ready"/ },
    ...BASELINE_POLICIES.map((p) => ({
      role: cli(`hookbus worker ${p}`, ["worker", sibling(`./policies/${p}`)]),
      ready: /"worker ready"/,
    })),
  ];
}

/** The baseline's coordinator, then its responders p1 to p3. */
function startBaselineRoles(
  children: ChildGroup,
  names: BaselineNames,
  env: Record<string, string>,
): Starting[] {
  const role = (name: string, args: string[]) => ({
    role: children.add(name, startNode(sibling("../baseline-role"), args, env)),
    ready: /^ready$/m,
  });
  return [
    role("baseline coordinator", ["coordinator", names.prefix, names.stream]),
    ...BASELINE_POLICIES.map((p) =>
      role(`baseline responder ${p}`, ["responder", p, names.prefix, names.stream]),
    ),
  ];
}

/**
 * Calls until one is allowed by all three workers: the client off its fast path, the
 * coordinator with the registry, each worker seen live (one not yet seen is a fail-closed block).
 */
async function allowedBefore(
  deadline: number,
  call: () => Promise<{ block?: boolean | undefined; blockReason?: string | undefined }>,
): Promise<void> {
  let last = "no call answered";
  while (Date.now() < deadline) {
    try {
      const decision = await call();
      if (decision.block !== true) return;
      last = `blocked: ${decision.blockReason ?? "(no reason)"}`;
    } catch (error) {
      last = String((error as Error)?.message ?? error);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`hookbus processes: no call was allowed before the start deadline (${last})`);
}

/**
 * CPU this process and `pids` used so far, in µs, this process first; undefined when one of them
 * cannot be read.
 */
async function cpuSoFar(pids: number[]): Promise<number[] | undefined> {
  const own = process.cpuUsage();
  const all = [own.user + own.system];
  for (const pid of pids) {
    const us = await cpuUs(pid);
    if (us === undefined) return undefined;
    all.push(us);
  }
  return all;
}

interface SideRecord {
  latencies: number[];
  throughputs: number[];
  /** CPU used during the concurrent rounds, per process (this one, coordinator, workers). */
  cpuUs: number[] | undefined;
}

async function measure(opts: ProcessShapeOptions, calls: SideCalls): Promise<ProcessShapeResult> {
  const { sequential } = opts;
  const fresh = (): SideRecord => ({ latencies: [], throughputs: [], cpuUs: [0, 0, 0, 0, 0] });
  const sides = { baseline: fresh(), hookbus: fresh() };
  // Warm both paths (JIT in every process, connections, stream files).
  await sequential(() => calls.baseline(0), 300, []);
  await sequential(() => calls.hookbus(0), 300, []);
  for (let round = 0; round < opts.rounds; round++) {
    await sequential(() => calls.baseline(0), opts.sequentialPerRound, sides.baseline.latencies);
    await sequential(() => calls.hookbus(0), opts.sequentialPerRound, sides.hookbus.latencies);
  }
  for (let round = 0; round < 2; round++) {
    for (const name of ["baseline", "hookbus"] as const) {
      const side = sides[name];
      const before = await cpuSoFar(calls.pids[name]);
      side.throughputs.push(await concurrent(calls[name], opts.concurrentCalls, opts.concurrency));
      const after = await cpuSoFar(calls.pids[name]);
      const sum = side.cpuUs;
      side.cpuUs =
        before === undefined || after === undefined || sum === undefined
          ? undefined
          : sum.map((us, i) => us + after[i]! - before[i]!);
    }
  }
  const callsMeasured = 2 * opts.concurrentCalls;
  const result = (side: SideRecord): ProcessSide => {
    const per = side.cpuUs?.map((us) => us / callsMeasured);
    return {
      latencies: side.latencies,
      throughputs: side.throughputs,
      cpuUsPerCall:
        per === undefined
          ? undefined
          : {
              total: per.reduce((a, b) => a + b, 0),
              caller: per[0]!,
              coordinator: per[1]!,
              workers: per.slice(2),
            },
    };
  };
  return { baseline: result(sides.baseline), hookbus: result(sides.hookbus) };
}
