/** `hookbus status` as text: problems first and loud, then policies per hook, then coordinators. */
import type { RecentStats } from "../observability/recent-window.js";
import type { StatusReport } from "./report.js";

function latency(stats: RecentStats): string {
  if (stats.count === 0) return "no recent calls";
  return `p50 ${stats.p50Ms} ms  p99 ${stats.p99Ms} ms  errors ${(stats.errorRate * 100).toFixed(1)}%  (${stats.count} calls)`;
}

export function formatStatus(report: StatusReport): string[] {
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
  for (const policy of report.policies) {
    const versions = policy.versions.length === 0 ? "" : `  versions ${policy.versions.join(", ")}`;
    const state = policy.alive ? `${policy.workers} live worker(s)${versions}` : "NO LIVE WORKER";
    lines.push(
      `  ${policy.name}  [${policy.mode}${policy.failMode === undefined ? "" : `, ${policy.failMode}`}]  ${state}`,
    );
    for (const hook of policy.hooks) {
      lines.push(
        `    ${hook.hook.padEnd(22)} ${String(hook.workers).padStart(3)} worker(s)  ${latency(hook.stats)}`,
      );
    }
  }
  if (report.undeclared.length > 0) {
    lines.push(
      "",
      `workers serving undeclared policies (never asked): ${report.undeclared.join(", ")}`,
    );
  }
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
