/**
 * `hookbus status` as pure analysis: the registry in force and the discovery replies in, a
 * report out (what is declared, what is alive, what is wrong). No I/O here; reading is in
 * read.ts, formatting in format.ts. Every problem names what fixes it.
 */
import {
  isCedarPolicy,
  type PolicyKind,
  type RegistryPolicy,
  type ValidRegistryDocument,
} from "../registry/document.js";
import type {
  CoordinatorDescription,
  DiscoveryReply,
  WorkerDescription,
} from "../observability/discovery-schema.js";
import type { RecentStats } from "../observability/recent-window.js";
import { workersByPolicy } from "../observability/discovery.js";
import { cedarEntryStatus, unreportedCedarProblems, type CedarEntryStatus } from "./cedar.js";

export interface HookStatus {
  hook: string;
  /** Live workers whose policy handles this hook. */
  workers: number;
  /** Over those workers: summed count, the highest p50/p99 (the slowest worker), weighted error rate. */
  stats: RecentStats;
}

export interface PolicyReport {
  name: string;
  /** worker: asked over NATS (any language); cedar: evaluated in every coordinator. */
  kind: PolicyKind;
  mode: string;
  failMode?: string;
  workers: number;
  /** Policy versions the live workers report ("unversioned" for none); a Cedar set's hash. */
  versions: string[];
  hooks: HookStatus[];
  /** Worker: served by a live worker. Cedar: loaded as the registry holds it in every live coordinator. */
  alive: boolean;
  /** Cedar entries: the set's hash and how many live coordinators evaluate exactly it. */
  cedar?: CedarEntryStatus;
}

export interface StatusReport {
  registryRevision: number;
  policies: PolicyReport[];
  coordinators: CoordinatorDescription[];
  /** Policies served by live workers that the registry does not declare (never asked). */
  undeclared: string[];
  /** What an operator must look at, one line each; empty when all is well. */
  problems: string[];
}

export interface StatusReportOptions {
  /**
   * No coordinator answered discovery, yet the server routed the request to something (no "no
   * responders"): a coordinator busy, not absent.
   */
  coordinatorsSilent?: boolean;
}

export function combineStats(all: readonly RecentStats[]): RecentStats {
  const withSamples = all.filter((s) => s.count > 0);
  const count = withSamples.reduce((sum, s) => sum + s.count, 0);
  if (count === 0) return { count: 0, errorRate: 0 };
  const errors = withSamples.reduce((sum, s) => sum + s.errorRate * s.count, 0);
  return {
    count,
    p50Ms: Math.max(...withSamples.map((s) => s.p50Ms ?? 0)),
    p99Ms: Math.max(...withSamples.map((s) => s.p99Ms ?? 0)),
    errorRate: Math.round((errors / count) * 1000) / 1000,
  };
}

type Workers = readonly WorkerDescription[];

/** A worker entry: alive when a live worker (any language that answers discovery) serves it. */
function workerEntry(
  declared: RegistryPolicy,
  workers: Workers,
  live: ReturnType<typeof workersByPolicy>,
  problems: string[],
): PolicyReport {
  const served = workers.flatMap((w) => w.policies.filter((p) => p.name === declared.name));
  const hooks = declared.hooks.map((hook): HookStatus => {
    const handling = served.filter((p) => p.hooks.includes(hook));
    if (served.length > 0 && handling.length === 0) {
      problems.push(
        `policy "${declared.name}" is declared for ${hook} but no live worker handles it: start a worker whose policy handles ${hook}, or remove the hook from the entry and apply it: hookbus registry apply FILE`,
      );
    }
    return {
      hook,
      workers: handling.length,
      stats: combineStats(handling.map((p) => p.stats[hook] ?? { count: 0, errorRate: 0 })),
    };
  });
  const entry = live.get(declared.name);
  const alive = entry !== undefined && entry.count > 0;
  if (!alive) {
    problems.push(
      `policy "${declared.name}" has NO live worker (${declared.mode}, ${declared.failMode ?? "hook default"}): every call to ${declared.hooks.join(", ")} gets its failure mode; start its worker: hookbus worker MODULE (or the worker of its language, e.g. hookbus-worker for Python)`,
    );
  }
  return {
    ...entryBase(declared, "worker"),
    workers: entry?.count ?? 0,
    versions: [...(entry?.versions ?? [])].sort(),
    hooks,
    alive,
  };
}

/** A Cedar entry: alive when every live coordinator evaluates the registry's text (status/cedar.ts). */
function cedarEntry(
  declared: RegistryPolicy & { cedar: string },
  registryRevision: number,
  coordinators: readonly CoordinatorDescription[],
  problems: string[],
): PolicyReport {
  const { problems: found, ...cedar } = cedarEntryStatus(declared, registryRevision, coordinators);
  problems.push(...found);
  return {
    ...entryBase(declared, "cedar"),
    workers: 0,
    versions: [cedar.hash],
    // Decided in-process: no worker stats; the coordinators' call stats cover them.
    hooks: declared.hooks.map((hook) => ({ hook, workers: 0, stats: { count: 0, errorRate: 0 } })),
    alive: cedar.coordinators > 0 && cedar.loadedIn === cedar.coordinators,
    cedar,
  };
}

function entryBase(declared: RegistryPolicy, kind: PolicyKind) {
  return {
    name: declared.name,
    kind,
    mode: declared.mode,
    ...(declared.failMode === undefined ? {} : { failMode: declared.failMode }),
  };
}

function coordinatorProblems(
  registryRevision: number,
  coordinators: readonly CoordinatorDescription[],
  cedarPolicies: number,
  silent: boolean,
): string[] {
  const problems: string[] = [];
  if (coordinators.length === 0 && silent)
    problems.push(
      "no coordinator answered, yet something listens for coordinators: one may be busy (loading a large Cedar set holds it for seconds); run hookbus status --wait 10000",
    );
  else if (coordinators.length === 0)
    problems.push("no coordinator is alive: agents' calls fail; start one: hookbus coordinator");
  for (const c of coordinators) {
    if (c.registryRevision !== registryRevision) {
      problems.push(
        `coordinator "${c.id}" decides with registry revision ${c.registryRevision}, the registry is at ${registryRevision}: if it stays behind (hookbus status again), restart it: it loads the revision in force at start`,
      );
    }
  }
  problems.push(...unreportedCedarProblems(coordinators, cedarPolicies));
  problems.push(...signingProblems(coordinators));
  return problems;
}

export function buildStatusReport(
  registryRevision: number,
  document: ValidRegistryDocument,
  replies: readonly DiscoveryReply[],
  options: StatusReportOptions = {},
): StatusReport {
  const workers = replies.filter((r): r is WorkerDescription => r.role === "worker");
  const coordinators = replies
    .filter((r): r is CoordinatorDescription => r.role === "coordinator")
    .sort((a, b) => a.id.localeCompare(b.id));
  const live = workersByPolicy(workers);
  const problems: string[] = [];
  const policies = document.policies.map((declared) =>
    isCedarPolicy(declared)
      ? cedarEntry(declared, registryRevision, coordinators, problems)
      : workerEntry(declared, workers, live, problems),
  );
  const cedarPolicies = policies.filter((p) => p.kind === "cedar").length;
  problems.push(
    ...coordinatorProblems(
      registryRevision,
      coordinators,
      cedarPolicies,
      options.coordinatorsSilent === true,
    ),
  );
  if (registryRevision === 0)
    // The agent SDK refuses every call of a namespace without a registry (HOOKBUS_NO_REGISTRY).
    problems.unshift(
      "no registry was ever applied in this namespace: agents' calls are refused (HOOKBUS_NO_REGISTRY) until one is: hookbus registry apply FILE",
    );
  // A worker serving a name declared as a worker entry is asked; any other worker is not.
  const asked = new Set(policies.filter((p) => p.kind === "worker").map((p) => p.name));
  const undeclared = [...live.keys()].filter((name) => !asked.has(name)).sort();
  return { registryRevision, policies, coordinators, undeclared, problems };
}

/**
 * A coordinator without a signing key among coordinators that sign: its records fail
 * `audit verify` (unsigned-record). When none signs, signing is simply not set up.
 */
function signingProblems(coordinators: readonly CoordinatorDescription[]): string[] {
  if (!coordinators.some((c) => c.signingKey !== undefined)) return [];
  return coordinators
    .filter((c) => c.signingKey === undefined)
    .map(
      (c) =>
        `coordinator "${c.id}" does not sign the records it writes (others do): give it its key from \`hookbus auth\` (--sign-key-file), or \`audit verify\` reports its records as unsigned-record`,
    );
}
