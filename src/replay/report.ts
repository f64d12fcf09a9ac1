/** Replay results for people: one line per record and the summary tables (`hookbus replay`). */
import type { ReplaySummary } from "./summary.js";
import type { ReplayResult, ReplayStats } from "./types.js";

/** `changed #12 ops-bot/ops-1 call-7  before_tool_call exec: allow → block by `shell-guard`  [counterfactual]` */
export function formatResultLine(result: ReplayResult): string {
  const flags = [
    ...(result.counterfactual ? ["counterfactual"] : []),
    ...(result.incomplete === undefined
      ? []
      : [`incomplete: masked ${result.incomplete.maskedPaths.join(", ")}`]),
    // Who caused it, unless the summary already says ("block by `x`").
    ...(result.status === "changed" &&
    result.causes.some((c) => !result.summary.includes(`\`${c}\``))
      ? [`by ${result.causes.join(", ")}`]
      : []),
  ];
  const where = `${result.seq === undefined ? "" : `#${result.seq} `}${result.agentId}/${result.sessionKey} ${result.callId}`;
  const line = `${result.status === "changed" ? "changed" : "same   "}  ${where}  ${result.summary}`;
  const notes = (result.notes ?? []).map((n) => `\n           note: ${n}`).join("");
  return `${line}${flags.length > 0 ? `  [${flags.join("; ")}]` : ""}${notes}`;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

export function formatSummary(summary: ReplaySummary, stats?: ReplayStats): string {
  const lines: string[] = [];
  const s = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  lines.push(
    `replayed ${s(summary.records, "decision record")} from ${s(summary.sessions, "session")}: ` +
      `${summary.changed} changed (in ${s(summary.changedSessions, "session")}), ${summary.unchanged} unchanged`,
  );
  lines.push(
    `counterfactual: ${summary.counterfactual} (after a changed decision in their session)` +
      `; incomplete: ${summary.incomplete} (inputs masked by redaction)`,
  );
  if (stats !== undefined) {
    const { error, late, approval, erasure, erased } = stats.skipped;
    const skipped = error + late + approval + erasure + erased;
    lines.push(
      `observations fed to policies: ${stats.observations}` +
        (stats.observationErrors > 0 ? ` (${stats.observationErrors} handler errors)` : "") +
        `; skipped records: ${skipped} (${stats.skipped.error} error, ${stats.skipped.late} late verdict, ${stats.skipped.approval} approval, ${erased} erased, ${erasure} erasure)`,
    );
  }
  const hooks = Object.entries(summary.byHook);
  if (hooks.length > 0) {
    lines.push("");
    lines.push(
      ...table(
        ["hook", "records", "changed"],
        hooks.map(([hook, c]) => [hook, String(c.records), String(c.changed)]),
      ),
    );
  }
  const policies = Object.entries(summary.byPolicy);
  if (policies.length > 0) {
    lines.push("");
    lines.push(
      ...table(
        ["changed by policy", "records"],
        policies.map(([policy, n]) => [policy, String(n)]),
      ),
    );
  }
  const changes = Object.entries(summary.byChange);
  if (changes.length > 0) {
    lines.push("");
    lines.push(
      ...table(
        ["kind of change", "records"],
        changes.map(([change, n]) => [change, String(n)]),
      ),
    );
  }
  return lines.join("\n");
}
