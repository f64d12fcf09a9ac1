/** `hookbus status` as text: problems first and loud, then policies per hook, then coordinators. */
import type { RecentStats } from "../observability/recent-window.js";
import type { PolicyReport, StatusReport } from "./report.js";

function latency(stats: RecentStats): string {
  if (stats.count === 0) return "no recent calls";
  return `p50 ${stats.p50Ms} ms  p99 ${stats.p99Ms} ms  errors ${(stats.errorRate * 100).toFixed(1)}%  (${stats.count} calls)`;
}

function formatPolicy(policy: PolicyReport): string[] {
  const modes = `[${policy.mode}${policy.failMode === undefined ? "" : `, ${policy.failMode}`}]`;
  if (policy.cedar !== undefined) {
    const { hash, loadedIn, coordinators } = policy.cedar;
    const state = policy.alive
      ? `Cedar set ${hash.slice(0, 19)}…  loaded in ${loadedIn} of ${coordinators} coordinator(s)`
      : `Cedar set ${hash.slice(0, 19)}…  NOT CONFIRMED: loaded in ${loadedIn} of ${coordinators} coordinator(s)`;
    return [
      `  ${policy.name}  ${modes}  ${state}`,
      `    ${policy.hooks.map((h) => h.hook).join(", ")}  (in-process)`,
    ];
  }
  const versions = policy.versions.length === 0 ? "" : `  versions ${policy.versions.join(", ")}`;
  const state = policy.alive ? `${policy.workers} live worker(s)${versions}` : "NO LIVE WORKER";
  return [
    `  ${policy.name}  ${modes}  ${state}`,
    ...policy.hooks.map(
      (hook) =>
        `    ${hook.hook.padEnd(22)} ${String(hook.workers).padStart(3)} worker(s)  ${latency(hook.stats)}`,
    ),
  ];
}

export function formatStatus(report: StatusReport & { invalidReplies?: number }): string[] {
  const lines: string[] = [];
  lines.push(
    report.registryRevision === 0
      ? "no registry applied"
      : `registry revision ${report.registryRevision}  (${report.policies.length} policies)`,
  );
  if (report.problems.length > 0) {
    lines.push("", `!! ${report.problems.length} PROBLEM(S)`);
    for (const problem of report.problems) lines.push(`!! ${problem}`);
  }
  lines.push("", "policies:");
  if (report.registryRevision === 0)
    lines.push("  (no registry: the agent SDK refuses every call with HOOKBUS_NO_REGISTRY)");
  else if (report.policies.length === 0)
    lines.push("  (none declared: every call is allowed without a record)");
  for (const policy of report.policies) lines.push(...formatPolicy(policy));
  if (report.undeclared.length > 0) {
    lines.push(
      "",
      `workers serving undeclared policies (never asked): ${report.undeclared.join(", ")}`,
    );
  }
  if ((report.invalidReplies ?? 0) > 0)
    lines.push(
      "",
      `${report.invalidReplies} discovery repl(ies) were not a valid description (another hookbus version, or a worker SDK that does not follow docs/protocol.md "Discovery")`,
    );
  lines.push("", `coordinators: ${report.coordinators.length} alive`);
  for (const c of report.coordinators) {
    const log =
      "omitted" in c.log
        ? `log lag omitted (${c.log.omitted})`
        : c.log.lag === undefined
          ? `log last seq ${c.log.streamLastSeq}`
          : `log lag ${c.log.lag} (last written ${c.log.lastWrittenSeq}, stream ${c.log.streamLastSeq})`;
    lines.push(
      `  ${c.id}  v${c.hookbus}  ${c.host}:${c.pid}  revision ${c.registryRevision}  in flight ${c.inFlight}  handled ${c.callsHandled}`,
    );
    lines.push(`    calls: ${latency(c.calls)};  ${log}`);
  }
  return lines;
}
