/** The report as a table for people (`--json` prints the report itself). */
import type { ConformanceReport } from "./run.js";

export function formatReport(report: ConformanceReport): string {
  const width = Math.max(...report.cases.map((c) => c.name.length), 4);
  const lines = [`${"case".padEnd(width)}  result  ms      first difference`];
  for (const c of report.cases) {
    lines.push(
      `${c.name.padEnd(width)}  ${c.ok ? "pass  " : "FAIL  "}  ${String(c.ms).padEnd(6)}  ${c.difference ?? ""}`,
    );
  }
  lines.push("", `${report.passed} passed, ${report.failed} failed (policy ${report.policy})`);
  if (report.workerOutput !== undefined && report.workerOutput !== "")
    lines.push("", "worker output (end):", report.workerOutput);
  return lines.join("\n");
}
