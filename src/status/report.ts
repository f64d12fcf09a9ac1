/**
 * `hookbus status` as pure analysis: the registry in force and the discovery replies in, a
 * report out (what is declared, what is alive, what is wrong). No I/O here; reading is in
 * status-read.ts, formatting in status-format.ts.
 */
import type { ValidRegistryDocument } from "../registry/document.js";
import type {
  CoordinatorDescription,
  DiscoveryReply,
  WorkerDescription,
} from "../observability/discovery-schema.js";
import type { RecentStats } from "../observability/recent-window.js";
import { workersByPolicy } from "../observability/discovery.js";

export interface HookStatus {
  hook: string;
  /** Live workers whose policy handles this hook. */
  workers: number;
  /** Over those workers: summed count, the highest p50/p99 (the slowest worker), weighted error rate. */
  stats: RecentStats;
}

export interface PolicyReport {
  name: string;
  mode: string;
  failMode?: string;
  workers: number;
  /** Policy versions the live workers report ("unversioned" for none). */
  versions: string[];
  hooks: HookStatus[];
  alive: boolean;
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

export function buildStatusReport(
  registryRevision: number,
  document: ValidRegistryDocument,
  replies: readonly DiscoveryReply[],
): StatusReport {
  const workers = replies.filter((r): r is WorkerDescription => r.role === "worker");
  const coordinators = replies
    .filter((r): r is CoordinatorDescription => r.role === "coordinator")
    .sort((a, b) => a.id.localeCompare(b.id));
  const live = workersByPolicy(workers);
  const problems: string[] = [];

  const policies = document.policies.map((declared): PolicyReport => {
    const served = workers.flatMap((w) => w.policies.filter((p) => p.name === declared.name));
    const hooks = declared.hooks.map((hook): HookStatus => {
      const handling = served.filter((p) => p.hooks.includes(hook));
      if (served.length > 0 && handling.length === 0) {
        problems.push(
          `policy "${declared.name}" is declared for ${hook} but no live worker handles it`,
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
        `policy "${declared.name}" has NO live worker (${declared.mode}, ${declared.failMode ?? "hook default"}): every call to ${declared.hooks.join(", ")} gets its failure mode`,
      );
    }
    return {
      name: declared.name,
      mode: declared.mode,
      ...(declared.failMode === undefined ? {} : { failMode: declared.failMode }),
      workers: entry?.count ?? 0,
      versions: [...(entry?.versions ?? [])].sort(),
      hooks,
      alive,
    };
  });

  if (coordinators.length === 0) problems.push("no coordinator is alive: agents' calls fail");
  for (const c of coordinators) {
    if (c.registryRevision !== registryRevision) {
      problems.push(
        `coordinator "${c.id}" decides with registry revision ${c.registryRevision}, the registry is at ${registryRevision}`,
      );
    }
  }
  problems.push(...signingProblems(coordinators));
  if (registryRevision === 0)
    // The agent SDK refuses every call of a namespace without a registry (HOOKBUS_NO_REGISTRY).
    problems.unshift(
      "no registry was ever applied in this namespace: agents' calls are refused (HOOKBUS_NO_REGISTRY) until one is: hookbus registry apply FILE",
    );
  const declared = new Set(document.policies.map((p) => p.name));
  const undeclared = [...live.keys()].filter((name) => !declared.has(name)).sort();
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
