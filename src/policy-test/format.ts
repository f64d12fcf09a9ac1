/** The text report of `hookbus policy test`: one line per case, details under failures. */
import type { CaseResult } from "./run.js";

function show(value: unknown): string {
  return value === undefined ? "(unset)" : JSON.stringify(value);
}

export interface TestSummary {
  passed: number;
  failed: number;
  errors: number;
}

export function summarize(results: readonly CaseResult[]): TestSummary {
  return {
    passed: results.filter((r) => r.status === "pass").length,
    failed: results.filter((r) => r.status === "fail").length,
    errors: results.filter((r) => r.status === "error").length,
  };
}

export function formatTestReport(results: readonly CaseResult[], verbose = false): string {
  const lines: string[] = [];
  const width = Math.max(4, ...results.map((r) => r.name.length));
  for (const r of results) {
    if (r.status === "pass" && !verbose) continue;
    const outcome = r.decision?.outcome ?? "-";
    lines.push(
      `${r.status.toUpperCase().padEnd(5)} ${r.name.padEnd(width)}  ${r.hook.padEnd(20)} ${outcome}   (${r.file})`,
    );
    for (const m of r.mismatches)
      lines.push(`      ${m.field}: expected ${show(m.expected)}, got ${show(m.actual)}`);
    if (r.decision?.outcome === "block" && r.status === "fail")
      lines.push(`      blocked by ${show(r.decision.blockedBy)}: ${show(r.decision.blockReason)}`);
    if (r.error !== undefined) lines.push(`      ${r.error.code}: ${r.error.message}`);
  }
  const s = summarize(results);
  lines.push(
    `${results.length} cases: ${s.passed} passed, ${s.failed} failed${s.errors > 0 ? `, ${s.errors} errors` : ""}`,
  );
  return lines.join("\n");
}
