/** `audit verify`'s report for people: one line per finding, then the verdict and what it covers. */
import type { VerifyReport } from "./verify-analyse.js";

export function formatVerifyReport(
  report: VerifyReport,
  options: { verbose?: boolean } = {},
): string {
  const lines: string[] = [];
  for (const f of report.findings) lines.push(`${f.kind.padEnd(12)} ${f.message}`);
  if (report.findingsOmitted > 0) lines.push(`… and ${report.findingsOmitted} more finding(s)`);
  const u = report.unsealed;
  if (u.records > 0) {
    lines.push(
      report.batches === 0
        ? `UNSEALED: no seal batch in namespace ${report.namespace}: the log predates the sealer or no sealer has run (start \`hookbus sealer\`); ${u.records} record(s) not checked against seals`
        : `unsealed: ${u.records} record(s) from seq ${u.fromSeq} on are newer than the last seal (seq ${report.sealedThrough}); not tampering, not yet sealed`,
    );
    if (options.verbose === true) {
      for (const s of u.sample) lines.push(`  unsealed seq ${s.seq} ${s.subject}`);
    }
  }
  if (report.legacyChained > 0) {
    lines.push(
      `note: ${report.legacyChained} record(s) carry per-record chain fields from before the sealer; they are checked against the seals like every record`,
    );
  }
  if (report.signatures === "self-declared" && report.batches > 0) {
    lines.push(
      "warning: no trusted key given (--key or HOOKBUS_SEAL_PUBLIC_KEYS): signatures were checked against the key each batch names, which a forger could choose",
    );
  }
  const rs = report.recordSignatures;
  if (rs !== undefined) {
    lines.push(
      `signatures: ${rs.signed} record(s) signed by ${rs.keys} trusted coordinator key(s) (${rs.batches} batch(es))` +
        (rs.pending > 0
          ? `; ${rs.pending} newer than ${rs.graceMs} ms still wait for their batch (not tampering)`
          : ""),
    );
    for (const t of report.crashTails ?? []) {
      lines.push(
        `crash tail: coordinator ${t.coordinator} (key ${t.key.slice(0, 12)}…, run ${t.run}): ${t.records} record(s), seq ${t.fromSeq}-${t.toSeq} (last stored ${t.lastRecordAt}), never signed: the run's last signature batch was stored ${t.lastBatchAt} and it died before theirs. Not forged by this bound, not provable either (docs/security.md, "Crash tails")`,
      );
    }
  } else if ((report.uncheckedSignatureBatches ?? 0) > 0) {
    lines.push(
      "warning: coordinators sign their records here, but no trusted coordinator key was given (--coordinator-keys FILE or HOOKBUS_COORDINATOR_KEYS_FILE): who wrote each record was not checked",
    );
  }
  if (report.anchor !== undefined && report.anchor.found) {
    lines.push(`anchor: batch ${report.anchor.batch} found in the seal stream`);
  }
  const count = (kind: string) => report.findings.filter((f) => f.kind === kind).length;
  const total = report.findings.length + report.findingsOmitted;
  const stalled = count("stalled");
  lines.push(
    report.ok
      ? `OK: ${report.records} record(s) of namespace ${report.namespace} read, ${report.sealed} checked against ${report.batches} seal batch(es); none altered, removed, inserted or re-subjected`
      : stalled === report.findings.length && report.findingsOmitted === 0
        ? `STALLED: nothing found altered, removed, inserted or re-subjected in namespace ${report.namespace}, but sealing stopped for longer than the bound: a record removed in that time leaves no trace in the seals (${stalled} finding(s))`
        : `TAMPERED: ${total} finding(s) in namespace ${report.namespace}: ${count("altered")} altered, ${count("removed")} removed, ${count("inserted")} inserted, ${count("re-subjected")} re-subjected, ${count("seal")} about the seals${count("signature") > 0 ? `, ${count("signature")} about coordinator signatures` : ""}${count("lease") > 0 ? `, ${count("lease")} about the sealer lease` : ""}, ${stalled} stalled`,
  );
  return lines.join("\n");
}
