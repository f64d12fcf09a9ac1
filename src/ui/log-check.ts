/**
 * The index is a projection; the log is the record. A record page reads the same sequence from
 * the log (with the auditor's credentials) and says whether the index's copy is the log's, so a
 * tampered or stale index row cannot pass for the record.
 */
import type { AuditEntry } from "../audit/query.js";
import type { Bus } from "../bus/bus.js";
import { isHookbusError } from "../foundation/errors.js";
import { fetchEntry } from "../audit/pg/selection.js";
import { canonicalize } from "../foundation/canonical-json.js";
import { html, type Html } from "./html.js";

export type LogCheck =
  { kind: "same" } | { kind: "different" } | { kind: "missing"; code: string; message: string };

export async function checkAgainstLog(bus: Bus, entry: AuditEntry): Promise<LogCheck> {
  try {
    const fromLog = await fetchEntry(bus, entry.seq);
    const same =
      fromLog.subject === entry.subject &&
      canonicalize(fromLog.record) === canonicalize(entry.record);
    return same ? { kind: "same" } : { kind: "different" };
  } catch (error) {
    if (isHookbusError(error)) return { kind: "missing", code: error.code, message: error.message };
    const message = error instanceof Error ? error.message : String(error);
    return { kind: "missing", code: "HOOKBUS_LOG_UNAVAILABLE", message };
  }
}

export function logCheckNote(check: LogCheck, stream: string): Html {
  switch (check.kind) {
    case "same":
      return html`<p class="log-check ok">✓ the log (${stream}) holds this record as shown</p>`;
    case "different":
      return html`<p class="log-check bad">
        ✗ the index's copy differs from the log's record at this sequence: trust the log (<code
          >hookbus audit verify</code
        >) and re-index
      </p>`;
    case "missing":
      return html`<p class="log-check bad">
        ✗ not read from the log: <code>${check.code}</code> ${check.message}
      </p>`;
  }
}
